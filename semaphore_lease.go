package zklock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
)

// Lease is a set of leases of a Semaphore acquired together: it is one
// holder. Its methods are safe for concurrent use; a Lease must not be
// copied.
//
// Holding is not guaranteed once Lost fires: the session may have expired,
// taking the lease nodes with it, and others may hold the leases.
type Lease struct {
	sem *Semaphore
	n   int

	mu       sync.Mutex
	held     []*queue.Held // not yet released
	released bool
}

// N returns the number of leases held together.
func (l *Lease) N() int { return l.n }

// Data returns the data stored in the lease nodes (see WithData).
func (l *Lease) Data() []byte { return append([]byte(nil), l.sem.data...) }

// Release gives the leases back by deleting their nodes, retrying through
// connection loss until every delete succeeds, ctx ends (then what is left
// is still held and Release may be called again), or ownership is lost. It
// returns ErrLeaseReleased if the lease was already released and
// ErrLeaseLost if Lost fired first (the lease then counts as released).
func (l *Lease) Release(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return ErrLeaseReleased
	}
	q := l.sem.l.LeaseQueue()
	last := l.held[len(l.held)-1] // released last: identifies the Lease to Metrics
	for len(l.held) > 0 {
		err := q.Release(ctx, l.held[0])
		if errors.Is(err, queue.ErrLost) {
			l.held, l.released = nil, true
			l.sem.s.released(last)
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		l.held = l.held[1:]
	}
	l.released = true
	l.sem.s.released(last)
	return nil
}

// Lost returns a channel that is closed when ownership of the lease may have
// ended: at the session's ownership deadline or on expiry, before the server
// can hand the leases to others (see Mutex.Lost). It is closed once the
// lease is released.
func (l *Lease) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return closedCh
	}
	return l.held[0].Epoch.Done // all nodes share the epoch they were granted in
}

// Token returns the lease's fencing token: the creation zxid of its last
// node, which increases over successive leases of the semaphore. It is 0
// once the lease is released.
func (l *Lease) Token() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return 0
	}
	return l.held[len(l.held)-1].Token
}

// Guard returns a ZooKeeper check operation that succeeds only while the
// node behind Token exists (see Mutex.Guard), or nil once released.
func (l *Lease) Guard() *zk.CheckVersionRequest {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return nil
	}
	return acquisition{l.held[len(l.held)-1]}.guard()
}

// Nodes returns the full paths of the lease nodes not yet released.
func (l *Lease) Nodes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.held))
	for i, h := range l.held {
		out[i] = h.Path
	}
	return out
}

// check verifies the limit stored on the server before a grant. The stored
// limit can only change when <path> is reaped and re-created, which implies
// a new leases node: so it is read again only when the leases node's czxid
// differs from the one it was last verified under (usually once per
// Semaphore).
func (s *Semaphore) check(ctx context.Context, leasesCzxid int64) error {
	s.mu.Lock()
	ok := s.verified == leasesCzxid
	s.mu.Unlock()
	if ok {
		return nil
	}
	if err := s.verifyLimit(ctx); err != nil {
		return err
	}
	s.mu.Lock()
	s.verified = leasesCzxid
	s.mu.Unlock()
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
func (s *Semaphore) precheck(ctx context.Context, leasesCzxid int64) error {
	s.mu.Lock()
	v := s.verified
	s.mu.Unlock()
	if v != 0 && (leasesCzxid == 0 || leasesCzxid == v) {
		return nil
	}
	data, _, err := s.s.get(ctx, s.path)
	switch {
	case errors.Is(err, zk.ErrNoNode):
		return nil // reaped since: the queue starts over in a new incarnation
	case err != nil:
		return err
	case len(data) == 0:
		return nil
	}
	if err := s.compareLimit(data); err != nil {
		return err
	}
	if leasesCzxid != 0 {
		s.mu.Lock()
		s.verified = leasesCzxid
		s.mu.Unlock()
	}
	return nil
}

// compareLimit returns ErrLimitMismatch unless data, a non-empty stored
// limit, is s's.
func (s *Semaphore) compareLimit(data []byte) error {
	if bytes.Equal(data, []byte(strconv.Itoa(s.limit))) {
		return nil
	}
	return fmt.Errorf("%w: %s stores limit %q, this Semaphore has %d", ErrLimitMismatch, s.path, data, s.limit)
}

// maxLimitWrites bounds the compare-and-set rounds of verifyLimit: each lost
// round means another client stored a limit, which the next read sees.
const maxLimitWrites = 4

// verifyLimit stores our limit in <path>'s data if it is empty (a parent
// created by the queue or by Curator), with a version check so that of two
// clients racing only one writes, and compares it otherwise.
func (s *Semaphore) verifyLimit(ctx context.Context) error {
	want := []byte(strconv.Itoa(s.limit))
	for range maxLimitWrites {
		data, st, err := s.s.get(ctx, s.path)
		if err != nil {
			return err
		}
		if len(data) > 0 {
			return s.compareLimit(data)
		}
		err = s.s.do(ctx, func() error {
			_, err := s.s.conn.Set(s.path, want, st.Version)
			return err
		})
		if !errors.Is(err, zk.ErrBadVersion) { // bad version: read again
			return wrapOp("set", s.path, err)
		}
	}
	return fmt.Errorf("zklock: store the limit of %s: too many concurrent writers", s.path)
}
