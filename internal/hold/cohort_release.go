package hold

import (
	"context"
	"errors"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// A cohort's local holder lets go: the next local waiter holds, or the
// place is given back (cohort.go).

// Release ends h's local hold: the next local waiter holds, within the
// bound, or the place is given back. It fails as Line.Release does: a
// release cut off while it gives the place back drops the place (its node
// is deleted in the background, the local waiters enqueue again), and h
// is over all the same.
func (c *Cohort) Release(ctx context.Context, h *Hold) error {
	if err := CheckCtx(ctx); err != nil {
		return err
	}
	if !h.begin() {
		return errs.ErrNotLocked
	}
	return c.line.ended(h, c.release(ctx, h))
}

func (c *Cohort) release(ctx context.Context, h *Hold) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if isClosed(h.place.Epoch().Done) {
		// Lost: the session deletes the node if it survived; the waiters
		// left enqueue again, unless one of them did already.
		if c.holder == h {
			c.forgetLocked()
			c.holder = nil
			c.dispatchLocked()
		}
		return errs.ErrLockLost
	}
	if c.holder != h {
		// h's place was dropped under it: lost, or deleted by another
		// client (see nodeGone); the waiters left enqueued again.
		return errs.ErrLockLost
	}
	p := c.held
	if len(c.waiters) > 0 && c.withinBoundLocked() {
		if c.guarded && !c.bumpLocked(ctx, p) {
			return c.giveHeldLocked(ctx, h)
		}
		c.holder = nil
		c.dispatchLocked()
		return nil
	}
	return c.giveHeldLocked(ctx, h)
}

// bumpLocked invalidates the departing holder's Guard: a setData makes the
// node's data version one the next holder's Guard checks and the old
// Guard does not. It is applied before the next grant, and ZooKeeper
// applies a session's requests in order, so a multi the old holder sends
// later fails. It reports false if the write failed; the place is then
// given back instead. Local Acquire calls wait on c.mu meanwhile: they
// could not be granted before it anyway.
func (c *Cohort) bumpLocked(ctx context.Context, p *queue.Place) bool {
	if err := c.q.Conn.SetData(ctx, p.Last().Path, c.data, c.version); err != nil {
		return false
	}
	c.version++
	c.proven = true // the write found the node: it may be handed on
	return true
}

// giveHeldLocked gives the cohort's place back for its holder h; the
// waiters left enqueue again, behind the contenders now first. A give cut
// off drops the place (release.go): its node may be gone already, so it
// is never handed on again, and the waiters enqueue again all the same.
func (c *Cohort) giveHeldLocked(ctx context.Context, h *Hold) error {
	p := c.held
	c.holder = nil
	c.forgetLocked()
	err := c.giveLocked(ctx, p)
	if err != nil && !errors.Is(err, errs.ErrLockLost) {
		drop(c.q.Conn, p)
	}
	c.dispatchLocked()
	return err
}

// giveLocked deletes the place's node, announcing the release. Local
// Acquire calls meanwhile queue and wait: c.mu is released while the
// request is out.
func (c *Cohort) giveLocked(ctx context.Context, p *queue.Place) error {
	c.releasing = true
	c.mu.Unlock()
	err := c.q.Give(ctx, p)
	c.mu.Lock()
	c.releasing = false
	return err
}

// guard is Hold.Guard for h's local hold: it checks the node's data version
// as the cohort last wrote it, which the next local grant bumps. It is nil
// once h's place was dropped (lost or deleted): a write guarded by nothing
// must not be made.
func (c *Cohort) guard(h *Hold) *Guard {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.holder != h || c.held == nil {
		return nil
	}
	c.guarded = true
	return &Guard{Path: c.held.Last().Path, Version: c.version}
}
