package zklock

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/go-zookeeper/zk"
)

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
