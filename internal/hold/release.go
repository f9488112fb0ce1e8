package hold

import (
	"context"
	"fmt"
	"slices"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// Releasing a hold. A release that began is final: it gives the place
// back, finds the hold lost, or is cut off (its ctx ended, or an error
// other than the loss left it without an answer), and in every case the
// hold is over when it returns. A cut-off release may have deleted the
// node already (the request reached the server, its reply came too late),
// and then a waiter of another client holds by now; a hold put back to
// "held" would be reported live, its Lost open, and handed out again (a
// ReentrantMutex's re-entry, a Downgrade) while a rival holds. Which of
// the two happened only another round trip could tell, and the ctx has
// ended; so a cut-off hold counts as given up: its loss signal closes at
// once (Lost of a released hold), its layers stop, and its nodes are
// deleted in the background (drop). The call returns the error that cut
// it off (cutOff), which wraps ctx.Err() when ctx ended. A release that
// never began (ctx ended before the call, the hold released already)
// changes nothing. Line.Release and Cohort.Release end through ended.

// Release gives h back. It returns l.Errs.Lost (errs.ErrLockLost) when h's
// loss signal fired first, the place then counting as released (the
// session deletes its nodes if it survived); when the release is cut off
// (ctx ended while it was under way) it returns that error, wrapped, and
// h is over all the same (see above). A ctx ended before the call changes
// nothing.
func (l *Line) Release(ctx context.Context, h *Hold) error {
	if err := CheckCtx(ctx); err != nil {
		return err
	}
	if !h.begin() {
		if l.Errs != nil {
			return l.Errs.NotHeld
		}
		return errs.ErrNotLocked
	}
	expired, given := h.w.pause()
	var err error
	if given {
		h.w.awaitGive(ctx) // the bound gives it back: its node goes before we return
	} else {
		err = l.P.Give(ctx, h.place)
	}
	h.w.end()
	switch {
	case err != nil && !errorsIsLost(err):
		drop(l.Q.Conn, h.place)
	case expired:
		err = errs.ErrLockLost
	}
	return l.ended(h, err)
}

// ended ends h, whose release began, with its outcome err: nil (given
// back), the loss (errs.ErrLockLost), or any other error (cut off: its
// nodes were dropped). The hold is over in every case.
func (l *Line) ended(h *Hold, err error) error {
	h.finish()
	if l.Events != nil {
		l.Events.Released(h.place.Last())
	}
	switch {
	case err == nil:
		return nil
	case errorsIsLost(err):
		return l.lostErr()
	}
	return cutOff(err)
}

// cutOff is the error of a release cut off by err.
func cutOff(err error) error {
	return fmt.Errorf("zklock: release cut off (the hold is over; its node is deleted in the background): %w", err)
}

// drop deletes p's nodes, given up by a release that was cut off, in the
// background: until they are gone or their session is
// (queue.Conn.Discard), on a goroutine the session's Close waits for (its
// Close deletes them anyway). What the place runs beside its nodes (a
// permit holder's watch) stops first.
func drop(conn queue.Conn, p *queue.Place) {
	p.Stop()
	held := slices.Clone(p.Held)
	for _, n := range held {
		conn.Untrack(n.Epoch, &n.Tracked)
	}
	conn.Go(func(context.Context) {
		for _, n := range held {
			conn.Discard(n.Path, n.Epoch.SessionID)
		}
	})
}

func (l *Line) lostErr() error {
	if l.Errs != nil {
		return l.Errs.Lost
	}
	return errs.ErrLockLost
}

// Abandon gives h up without waiting: its layers stop, it counts as
// released, and its nodes are deleted in the background until they are
// gone or the session is (queue.Conn.Discard). For a hold whose owner is
// done with it whatever the server says: a lost term, a release cut off.
func (l *Line) Abandon(h *Hold) {
	if h.Released() {
		return
	}
	h.w.end()
	h.finish()
	for _, n := range h.place.Held {
		l.Q.Conn.Untrack(n.Epoch, &n.Tracked)
		l.Q.Conn.Discard(n.Path, n.Epoch.SessionID)
	}
	if l.Events != nil {
		l.Events.Released(h.place.Last())
	}
}
