package queue

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// The stored limit of Curator's semaphore layout: <path>'s data holds the
// limit (Curator's InterProcessSemaphoreV2 does not check it; zklock
// processes agree on it or are refused with errs.ErrLimitMismatch).

// dropTimeout bounds the deletion of the layout's empty nodes after a
// refusal.
const dropTimeout = 10 * time.Second

// check verifies the limit stored on the server, and that <path> holds no
// other kind of primitive, before a grant. The stored limit can only change
// when <path> is reaped and re-created, which implies a new leases node: so
// it is read again only when the leases node's czxid differs from the one
// it was last verified under (usually once per Semaphore).
//
// The layout needs no more: the check lists <path> after our lease node
// exists. A node of another kind created before that listing is in it; one
// created after it sees our leases node in its own first listing (the
// leases node has stood since, as its unchanged czxid shows) and refuses
// itself.
func (l *Leases) check(ctx context.Context, leasesCzxid int64) error {
	ok := l.verified.Load() == leasesCzxid
	if ok {
		return nil
	}
	if err := l.verifyLimit(ctx); err != nil {
		return err
	}
	l.verified.Store(leasesCzxid)
	return nil
}

// precheck refuses a stored limit that differs from s's before an
// acquisition waits for leases or queues (see LeaseRequest.Precheck):
// otherwise a smaller limit would wait for a count it never gets to see
// and a larger one would queue before learning it can never be granted.
// Unlike check it stores nothing, since the limit is stored by the first
// client granted. With leasesCzxid 0 (about to queue behind waiters, the
// leases not listed) a Semaphore that verified the limit before trusts it,
// sparing a request on every contended acquisition: a path re-created with
// another limit since is caught at the head of the queue.
func (l *Leases) precheck(ctx context.Context, leasesCzxid int64) error {
	v := l.verified.Load()
	if v != 0 && (leasesCzxid == 0 || leasesCzxid == v) {
		return nil
	}
	data, _, err := l.readDir(ctx)
	switch {
	case errors.Is(err, client.ErrNoNode):
		return nil // reaped since: the queue starts over in a new incarnation
	case err != nil:
		return err
	case len(data) == 0:
		return nil
	}
	if err := l.compareLimit(data); err != nil {
		return err
	}
	if leasesCzxid != 0 {
		l.verified.Store(leasesCzxid)
	}
	return nil
}

// compareLimit returns errs.ErrLimitMismatch unless data, a non-empty stored
// limit, is s's.
func (l *Leases) compareLimit(data []byte) error {
	if bytes.Equal(data, []byte(strconv.Itoa(l.Limit))) {
		return nil
	}
	return fmt.Errorf("%w: %s stores limit %q, this Semaphore has %d", errs.ErrLimitMismatch, l.Dir, data, l.Limit)
}

// maxLimitWrites bounds the compare-and-set rounds of verifyLimit: each lost
// round means another client stored a limit, which the next read sees.
const maxLimitWrites = 4

// verifyLimit stores our limit in <path>'s data if it is empty (a parent
// created by the queue or by Curator), with a version check so that of two
// clients racing only one writes, and compares it otherwise.
func (l *Leases) verifyLimit(ctx context.Context) error {
	want := []byte(strconv.Itoa(l.Limit))
	for range maxLimitWrites {
		data, st, err := l.readDir(ctx)
		if err != nil {
			return err
		}
		if len(data) > 0 {
			return l.compareLimit(data)
		}
		err = l.Conn.SetData(ctx, l.Dir, want, st.Version)
		if !errors.Is(err, client.ErrBadVersion) { // bad version: read again
			return err
		}
	}
	return fmt.Errorf("zklock: store the limit of %s: too many concurrent writers", l.Dir)
}

// semChildren are the children of a semaphore's own path.
var semChildren = []string{LocksChild, LeasesChild}

// readDir reads <path>'s data and stat, and refuses the path with a
// *WrongKindError when it holds another kind of primitive's nodes. The
// listing is sent concurrently with the read, so it adds a request but
// hardly any time; and it is made only when the limit is verified, usually
// once per Semaphore (see check).
func (l *Leases) readDir(ctx context.Context) ([]byte, *client.Stat, error) {
	listed := make(chan error, 1)
	go func() { listed <- l.checkKinds(ctx) }()
	data, st, err := l.Conn.Get(ctx, l.Dir)
	if kerr := <-listed; err == nil {
		err = kerr
	}
	return data, st, err
}

func (l *Leases) checkKinds(ctx context.Context) error {
	names, err := l.Conn.Children(ctx, l.Dir)
	switch {
	case errors.Is(err, client.ErrNoNode):
		return nil
	case err != nil:
		return err
	}
	if c, ok := Foreign(names, semChildren); ok {
		return WrongKind(l.Dir, c)
	}
	return nil
}

// dropLayout deletes <path>'s locks and leases nodes if they are empty,
// once an acquisition was refused for finding another kind there: the
// acquisition may have created them, and until the server reaps them they
// would make the path look like a semaphore's to its rightful users. A
// node that is not empty is in use and stays.
func (l *Leases) dropLayout(ctx context.Context) {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), dropTimeout)
	defer cancel()
	for _, p := range []string{l.LocksDir(), l.LeasesDir()} {
		_ = l.Conn.Delete(ctx, p)
	}
}
