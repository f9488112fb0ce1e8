package hold

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/queue"
)

// A cohort hands its node on in memory, so it must know the node still
// stands before each local grant: its epoch is one loss signal, and the
// node's deletion by another client (Break, force) is the other, which no
// epoch shows. So while a local handoff may come (a local waiter queued
// behind a local holder) the cohort keeps a data watch on its node, set by
// one read (per node, not per handoff: the uncontended path sends
// nothing more), and hands the node on only
//   - at its first grant, which the queue's listing just proved;
//   - right after a write to it succeeded (the guard bump found it);
//   - or while that watch is set and has not reported the node deleted.
// A node seen deleted is dropped: its holder's Release returns errs.ErrLockLost
// and the waiters enqueue again, behind whoever holds now. The one window
// left is the notification's own delay: a deletion the server has applied
// but whose event has not reached us yet, which no client can close
// without a round trip per handoff; fencing covers it (the deleted node's
// Guard fails, and the new holder's Token is larger).

// grantableLocked reports whether held may be handed to a local waiter now.
func (c *Cohort) grantableLocked() bool {
	return !isClosed(c.held.Epoch().Done) && (c.grants == 0 || c.proven || c.armed)
}

// watchLocked starts watching held, unless a watch runs already.
func (c *Cohort) watchLocked() {
	if c.watch != nil || c.held == nil {
		return
	}
	p := c.held
	ctx, cancel := context.WithCancel(context.Background())
	c.watch = cancel
	if !c.q.Conn.Go(func(bg context.Context) {
		defer context.AfterFunc(bg, cancel)()
		c.watchNode(ctx, p)
	}) {
		cancel() // the session is closing: its epoch's end fails the waiters
	}
}

// stopWatchLocked stops the watch on held, if one runs.
func (c *Cohort) stopWatchLocked() {
	if c.watch != nil {
		c.watch()
		c.watch = nil
	}
	c.armed, c.proven = false, false
}

// forgetLocked forgets the node held (released, lost or deleted).
func (c *Cohort) forgetLocked() {
	c.held = nil
	c.stopWatchLocked()
}

// watchNode watches h until ctx ends (the cohort forgot h) or h is deleted.
// Every data change fires a data watch (the cohort's own guard bump, a
// revocation request): it is set again, with one more read.
func (c *Cohort) watchNode(ctx context.Context, p *queue.Place) {
	for try := 0; ctx.Err() == nil; {
		_, ok, wait, err := c.q.Conn.ReadWatch(ctx, p.Last().Path)
		switch {
		case err != nil:
			try++
			pause(ctx, try) // the session retries transient errors itself
			continue
		case !ok:
			c.nodeGone(p)
			return
		}
		try = 0
		if !c.setArmed(p, true) {
			return
		}
		ch, err := wait(ctx)
		c.setArmed(p, false)
		if err == nil && ch == queue.Deleted {
			c.nodeGone(p)
			return
		}
	}
}

// setArmed records whether the watch on h is set, and dispatches once it
// is; false if h is no longer the cohort's live node.
func (c *Cohort) setArmed(p *queue.Place, armed bool) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != p || isClosed(p.Epoch().Done) {
		return false
	}
	c.armed = armed
	if armed {
		c.dispatchLocked()
	}
	return true
}

// nodeGone drops h, which was deleted while the cohort held it: its holder's
// Release returns errs.ErrLockLost, and the waiters enqueue again at once, as a
// waiter of another process behind h holds at once.
func (c *Cohort) nodeGone(p *queue.Place) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.held != p {
		return
	}
	c.q.Conn.Untrack(p.Epoch(), &p.Last().Tracked)
	c.forgetLocked()
	c.holder = nil
	c.dispatchLocked()
}

// pause waits before a failed read is tried again (10ms, doubling to a
// second), or until ctx ends.
func pause(ctx context.Context, try int) {
	t := time.NewTimer(min(10*time.Millisecond<<min(try, 7), time.Second))
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
