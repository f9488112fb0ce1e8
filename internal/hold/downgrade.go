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
// hold by now.
func (l *Line) Downgrade(ctx context.Context, w *Hold, q *queue.Queue, data []byte) (*Hold, error) {
	return l.acquire(ctx, func() (*Hold, error) { return l.downgrade(ctx, w, q, data) })
}

func (l *Line) downgrade(ctx context.Context, w *Hold, q *queue.Queue, data []byte) (*Hold, error) {
	if w.IsLost() {
		return nil, errs.ErrLockLost
	}
	// The bound must not give w's place back, announced, while the read
	// node is being placed beside it.
	if expired, given := w.w.pause(); expired || given {
		w.w.resume()
		return nil, errs.ErrLockLost
	}
	rh, err := q.Join(ctx, w.place.Last(), data)
	w.place.Quiet = true // a read node stands (or stood) at w's position
	w.w.resume()
	if err != nil {
		return nil, err
	}
	if w.IsLost() {
		// Lost while the read node was being made: it must go too.
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
