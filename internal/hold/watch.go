package hold

import (
	"context"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/queue"
)

// watch is what Layers add to a hold: goroutines of the session that watch
// it until it is given back. The bound (MaxHold) fires the hold's own loss
// signal and gives its place back, even while the session is healthy, so
// that a live but hung holder cannot keep it longer; the revocation watch
// closes revoked when a request arrives.
type watch struct {
	lost    chan struct{} // the hold's loss signal (MaxHold), else nil
	until   time.Time     // when the bound passes (MaxHold)
	revoked chan struct{} // closed on a revocation request (Revocable), else nil
	stop    context.CancelFunc
	done    chan struct{} // closed when the goroutines have ended

	mu      sync.Mutex
	cond    sync.Cond // on mu: signalled when busy drops
	expired bool      // the bound passed
	given   bool      // the bound gave the place back
	busy    bool      // a release or a downgrade is under way: the bound leaves the place to it
}

// BoundTimer makes the bound's timer; only tests replace it, to pass a
// bound when they choose.
var BoundTimer = func(d time.Duration) (<-chan time.Time, func() bool) {
	t := time.NewTimer(d)
	return t.C, t.Stop
}

// watch starts h's layers, ly.
func (l *Line) watch(h *Hold, ly Layers) *watch {
	ctx, cancel := context.WithCancel(context.Background())
	w := &watch{stop: cancel, done: make(chan struct{})}
	w.cond.L = &w.mu
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		if !ly.Q.Conn.Go(func(bg context.Context) {
			defer wg.Done()
			defer context.AfterFunc(bg, cancel)()
			f(ctx)
		}) {
			wg.Done()
		}
	}
	if ly.Revocable {
		w.revoked = make(chan struct{})
		run(func(ctx context.Context) {
			if watchRevocation(ctx, ly.Q.Conn, h.place.Last().Path, w.revoked) && l.Events != nil {
				l.Events.Revoked(l.Kind, l.Path)
			}
		})
	}
	if ly.MaxHold > 0 {
		w.lost, w.until = make(chan struct{}), time.Now().Add(ly.MaxHold)
		fire, stopTimer := BoundTimer(ly.MaxHold)
		run(func(ctx context.Context) {
			defer stopTimer()
			if w.bound(ctx, l, h, fire) && l.Events != nil {
				l.Events.Expired(l.Kind, l.Path)
			}
		})
	}
	go func() { wg.Wait(); close(w.done) }()
	return w
}

// bound closes w.lost when the epoch ends, the bound passes or the hold is
// released; when the bound passes first it gives the place back, after the
// signal, unless a release is under way (that release then returns the
// loss), and reports true.
func (w *watch) bound(ctx context.Context, l *Line, h *Hold, fire <-chan time.Time) bool {
	select {
	case <-h.place.Epoch().Done:
		close(w.lost)
		return false
	case <-ctx.Done():
		close(w.lost) // released: nothing is held
		return false
	case <-fire:
	}
	w.mu.Lock()
	w.expired = true
	close(w.lost)
	for w.busy {
		w.cond.Wait()
	}
	w.given = true
	w.mu.Unlock()
	for {
		// Stops at the epoch's end or when the hold is released; a place
		// still held after that is the session's to delete, or Release's.
		if err := l.P.Give(ctx, h.place); err == nil || ctx.Err() != nil || errorsIsLost(err) {
			return true
		}
		select {
		case <-ctx.Done():
			return true
		case <-h.place.Epoch().Done:
			return true
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// lostAfter is the loss signal given the epoch's: closed at once if the
// epoch has ended, else the bound's own.
func (w *watch) lostAfter(ep <-chan struct{}) <-chan struct{} {
	select {
	case <-ep:
		return closed
	default:
		return w.lost
	}
}

// pause holds off the bound's give-back while a release or a downgrade
// works on the place. It reports whether the bound passed, and whether the
// bound gave the place back already (then there is nothing to release).
func (w *watch) pause() (expired, given bool) {
	if w == nil {
		return false, false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy = true
	return w.expired, w.given
}

// resume ends a pause whose work did not give the place back (a release
// cut off by its ctx, a downgrade): a bound that passed meanwhile now
// gives it back.
func (w *watch) resume() {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.busy = false
	w.cond.Broadcast()
}

// end stops the layers of a hold given back.
func (w *watch) end() {
	if w == nil {
		return
	}
	w.stop()
	w.mu.Lock()
	w.busy = false
	w.cond.Broadcast()
	w.mu.Unlock()
	<-w.done
}

// watchRevocation closes revoked when node's data becomes a revocation
// request; it reports whether one came. It ends when ctx ends or the node
// goes.
func watchRevocation(ctx context.Context, conn queue.Conn, node string, revoked chan struct{}) bool {
	for ctx.Err() == nil {
		data, st, err := conn.Get(ctx, node)
		switch {
		case err != nil:
			return false // the node is gone, the session closed, or ctx ended
		case string(data) == queue.RevokeMessage:
			close(revoked)
			return true
		}
		if ch, err := conn.WaitData(ctx, node, st.Version); err != nil || ch == queue.Deleted {
			return false
		}
	}
	return false
}
