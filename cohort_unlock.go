package zklock

import (
	"context"
	"errors"

	"github.com/zklock/zklock/internal/queue"
)

// A cohort's local holder lets go: the next local waiter holds, or the
// node is released (cohort.go).

// unlock ends m's local hold: the next local waiter holds, within the
// bound, or the node is released. It fails as Mutex.Unlock does, keeping
// m's hold when ctx ends before the node is released.
func (c *cohort) unlock(ctx context.Context, m *Mutex, lost <-chan struct{}) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	select {
	case <-lost:
		// Lost: the session deletes the node if it survived; the waiters
		// left enqueue again, unless one of them did already.
		if c.holder == m {
			c.forgetLocked()
			c.holder = nil
			c.dispatchLocked()
		}
		return ErrLockLost
	default:
	}
	if c.holder != m {
		// m's node was dropped under it: lost, or deleted by another client
		// (see nodeGone); the waiters left enqueued again.
		return ErrLockLost
	}
	h := c.held
	if len(c.waiters) > 0 && c.withinBoundLocked() {
		if c.guarded && !c.bumpLocked(ctx, h) {
			return c.releaseHeldLocked(ctx, m)
		}
		c.holder = nil
		c.dispatchLocked()
		return nil
	}
	return c.releaseHeldLocked(ctx, m)
}

// bumpLocked invalidates the departing holder's Guard: a setData makes the
// node's data version one the next holder's Guard checks and the old
// Guard does not. It is applied before the next grant, and ZooKeeper
// applies a session's requests in order, so a multi the old holder sends
// later fails. It reports false if the write failed; the node is then
// released instead. Local Lock calls wait on c.mu meanwhile: they could
// not be granted before it anyway.
func (c *cohort) bumpLocked(ctx context.Context, h *queue.Held) bool {
	if err := c.q.Conn.SetData(ctx, h.Path, c.data, c.version); err != nil {
		return false
	}
	c.version++
	c.proven = true // the write found the node: it may be handed on
	return true
}

// releaseHeldLocked releases the cohort's node for its holder m; the
// waiters left enqueue again, behind the contenders now first.
func (c *cohort) releaseHeldLocked(ctx context.Context, m *Mutex) error {
	h := c.held
	c.holder = nil
	c.forgetLocked()
	if err := c.releaseLocked(h, ctx); err != nil && !errors.Is(err, ErrLockLost) {
		// Still ours: m holds again, and may Unlock again.
		c.holder, c.held = m, h
		return err
	}
	c.dispatchLocked()
	return nil
}

// releaseLocked deletes the node, announcing the release. Local Lock
// calls meanwhile queue and wait: c.mu is released while the request is
// out.
func (c *cohort) releaseLocked(h *queue.Held, ctx context.Context) error {
	c.releasing = true
	c.mu.Unlock()
	err := mapQueueErr(c.q.Release(ctx, h))
	c.mu.Lock()
	c.releasing = false
	return err
}

// guard is Mutex.Guard for m's local hold: it checks the node's data
// version as the cohort last wrote it, which the next local grant bumps.
func (c *cohort) guard(m *Mutex, path string) *CheckOp {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holder != m || c.held == nil || c.held.Path != path {
		return nil
	}
	c.guarded = true
	return &CheckOp{Path: path, Version: c.version}
}
