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
	gave    chan struct{} // closed when the bound's give-back is over (MaxHold)

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
			watchRevocation(ctx, ly.Q.Conn, h.place.Last().Path, w.revoked, func() {
				if ly.OnRevoke != nil {
					ly.OnRevoke()
				}
				if l.Events != nil {
					l.Events.Revoked(l.Kind, l.path())
				}
			})
		})
	}
	if ly.MaxHold > 0 {
		w.lost, w.until, w.gave = make(chan struct{}), time.Now().Add(ly.MaxHold), make(chan struct{})
		fire, stopTimer := BoundTimer(ly.MaxHold)
		run(func(ctx context.Context) {
			defer stopTimer()
			if w.bound(ctx, l, h, fire) && l.Events != nil {
				l.Events.Expired(l.Kind, l.path())
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
	defer close(w.gave)
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
	if ctx.Err() != nil {
		w.mu.Unlock()
		return true // a release gave the place back meanwhile
	}
	w.given = true
	w.mu.Unlock()
	// From here the give-back is the bound's alone: a Release that comes
	// now finds the place given and must not cut the give-back short (the
	// node would stay, and the next in line wait behind it), so it runs on
	// a ctx that the release's end of the layers does not cancel, until it
	// is done or the epoch ends (the session then deletes the node).
	gctx := context.WithoutCancel(ctx)
	for {
		if err := l.P.Give(gctx, h.place); err == nil || errorsIsLost(err) {
			return true
		}
		select {
		case <-h.place.Epoch().Done:
			return true
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// awaitGive waits, within ctx, for the bound's give-back of a place it
// gave (pause reported given); past ctx, the give-back goes on alone.
func (w *watch) awaitGive(ctx context.Context) {
	select {
	case <-w.gave:
	case <-ctx.Done():
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

// passed reports whether the bound passed (false without one).
func (w *watch) passed() bool {
	if w == nil {
		return false
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.expired
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

// end stops the layers of a hold given back. A give-back the bound began
// goes on until it is done or the epoch ends: end does not wait for it.
func (w *watch) end() {
	if w == nil {
		return
	}
	w.stop()
	w.mu.Lock()
	w.busy = false
	given := w.given
	w.cond.Broadcast()
	w.mu.Unlock()
	if !given {
		<-w.done
	}
}

// watchRevocation calls heard for each revocation request written into
// node (each write of one: a request's write bumps the node's version,
// even when the data was a request already) and closes revoked at the
// first. It ends when ctx ends or the node goes.
func watchRevocation(ctx context.Context, conn queue.Conn, node string, revoked chan struct{}, heard func()) {
	last := int32(-1) // the version of the request last heard
	for ctx.Err() == nil {
		data, st, err := conn.Get(ctx, node)
		if err != nil {
			return // the node is gone, the session closed, or ctx ended
		}
		if string(data) == queue.RevokeMessage && st.Version != last {
			if last < 0 {
				close(revoked)
			}
			last = st.Version
			heard()
		}
		if ch, err := conn.WaitData(ctx, node, st.Version); err != nil || ch == queue.Deleted {
			return
		}
	}
}
