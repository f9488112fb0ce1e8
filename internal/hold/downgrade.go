package hold

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// Downgrade grants a read hold on l, the read line of w's queue, beside w,
// a write hold: its node takes w's position (queue.Queue.Join, through q,
// the read queue, with data), so nothing queued behind w comes between.
// w goes on holding until it is released, then quietly: a writer queued
// behind must not take that release for its turn while the read node
// stands. The read hold ends at w's bound at the latest (Layers.MaxHold),
// and is revocable as l's holds are. It returns errs.ErrLockLost, holding
// nothing new, once w's loss signal fired or its node is gone: a read node
// must never be placed at the position of a write lock another client may
// hold by now; errs.ErrNotLocked once w's release began (a concurrent
// Unlock).
func (l *Line) Downgrade(ctx context.Context, w *Hold, q *queue.Queue, data []byte) (*Hold, error) {
	return l.acquire(ctx, l.Release, false, func() (*Hold, error) { return l.downgrade(ctx, w, q, data) })
}

func (l *Line) downgrade(ctx context.Context, w *Hold, q *queue.Queue, data []byte) (*Hold, error) {
	// A release of w that begins from here on must leave quietly: a read
	// node may stand at w's position by the time it deletes w's node. So
	// the place turns quiet before w's state is read, and a release that
	// began before (it may have read the place as not quiet, and announce)
	// makes the downgrade fail: Release begins, then reads Quiet; we set
	// Quiet, then read the state; one of the two sees the other's store.
	// (A place left quiet by a failed downgrade only releases unannounced:
	// its waiters list the queue instead.)
	w.place.SetQuiet()
	switch {
	case w.state.Load() != held:
		return nil, errs.ErrNotLocked // released, or being released
	case w.IsLost():
		return nil, errs.ErrLockLost
	}
	// The bound must not give w's place back while the read node is being
	// placed beside it.
	if expired, given := w.w.pause(); expired || given {
		w.w.resume()
		return nil, errs.ErrLockLost
	}
	rh, err := q.Join(ctx, w.place.Last(), data)
	w.w.resume()
	if err != nil {
		return nil, err
	}
	if isClosed(w.place.Epoch().Lost()) || w.w.passed() {
		// Lost while the read node was being made: it must go too. (A w
		// released meanwhile, without a loss, was released quietly, by
		// the order above, and Join found its node after ours was made:
		// the read node stands at its position, and the read hold is
		// good.)
		q.Conn.Untrack(rh.Epoch, &rh.Tracked)
		q.Conn.Discard(rh.Path, rh.Epoch.SessionID)
		return nil, errs.ErrLockLost
	}
	ly := l.layers()
	if w.w != nil && !w.w.until.IsZero() {
		left := max(time.Until(w.w.until), time.Nanosecond)
		if ly.MaxHold == 0 || left < ly.MaxHold {
			ly.MaxHold = left
		}
	}
	return l.grant(queue.OnePlace(rh), ly), nil
}
