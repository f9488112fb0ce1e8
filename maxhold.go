package zklock

import (
	"context"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/queue"
)

// WithMaxHold bounds how long a Mutex, ReentrantMutex or RWMutex holds:
// d after it was granted, its loss signal fires and its node is released,
// even while its session is healthy, so that a live but hung holder cannot
// keep the lock longer. Use it where a stuck holder costs more than a
// broken lock. Like every loss, it fires before the node is deleted, so
// before anyone else can hold: stop using the resource when Lost fires,
// and fence writes with Token or Guard (the expired holder's Guard fails
// once its node is gone; the next holder's Token is larger). Unlock after
// it returns ErrLockLost. The default is no bound; d must be positive.
//
// The hold's Lost is a channel of its own, closed at the bound, or at the
// session's ownership deadline by a goroutine that wakes then (within the
// deadline's safety margin, before a rival can hold); asked after that
// deadline, Lost returns a closed channel at once. A hold whose Unlock was
// cut off by its ctx is still held, and still bounded. An RWMutex read lock taken by downgrading ends at its write
// lock's bound at the latest, and a write node released at its bound
// beside such a read lock does not announce its release (the read lock
// still blocks the writers behind). A downgrade after the bound passed
// fails with ErrLockLost. A MultiLock part whose bound passes before the
// MultiLock holds every part makes it start over (see MultiLock.Lock).
//
// The bound is kept by the holder's own process, which is what a hung
// holder still runs (a holder whose whole process froze loses its session
// instead). ZooKeeper's TTL nodes would not do better: they are never
// ephemeral, so a crashed holder's node would outlive its session until
// the TTL, the server reaps them only on its container sweep, and they
// need the server option zookeeper.extendedTypesEnabled.
func WithMaxHold(d time.Duration) Option {
	return func(o *primitiveOptions) error {
		if d <= 0 {
			return invalid("max hold %v is not positive", d)
		}
		o.maxHold = d
		return nil
	}
}

// watchedHold is what WithRevocable and WithMaxHold add to a hold: a
// goroutine of the Session that watches it until it is released.
type watchedHold struct {
	lost    chan struct{} // the hold's own loss signal (WithMaxHold), else nil
	revoked chan struct{} // closed on a revocation request (WithRevocable), else nil
	until   time.Time     // when the bound passes (WithMaxHold)
	stop    context.CancelFunc
	done    chan struct{} // closed when the goroutines have ended

	mu      sync.Mutex
	cond    sync.Cond // on mu: signalled when pinned drops
	expired bool      // the bound passed
	pinned  bool      // a downgrade is placing a read node beside the node
	joined  bool      // a read node was placed beside the node (a downgrade)
}

// holdEvents reports a watched hold's events to Metrics.
type holdEvents struct {
	s          *Session
	kind, path string
}

func (e holdEvents) revoked() { e.s.recipe(func(m RecipeMetrics) { m.Revoked(e.kind, e.path) }) }
func (e holdEvents) expired() { e.s.recipe(func(m RecipeMetrics) { m.Expired(e.kind, e.path) }) }

// watchHold starts watching h, granted on q, as o asks; nil when it asks
// nothing.
func watchHold(q *queue.Queue, h *queue.Held, o primitiveOptions, ev holdEvents) *watchedHold {
	if h == nil || (!o.revocable && o.maxHold == 0) {
		return nil
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &watchedHold{stop: cancel, done: make(chan struct{})}
	w.cond.L = &w.mu
	var wg sync.WaitGroup
	run := func(f func(context.Context)) {
		wg.Add(1)
		if !q.Conn.Go(func(bg context.Context) {
			defer wg.Done()
			defer context.AfterFunc(bg, cancel)()
			f(ctx)
		}) {
			wg.Done()
		}
	}
	if o.revocable {
		w.revoked = make(chan struct{})
		run(func(ctx context.Context) {
			if watchRevocation(ctx, q.Conn, h.Path, w.revoked) {
				ev.revoked()
			}
		})
	}
	if o.maxHold > 0 {
		w.lost, w.until = make(chan struct{}), time.Now().Add(o.maxHold)
		run(func(ctx context.Context) {
			if w.bound(ctx, q, h, o.maxHold, o.holdTimer) {
				ev.expired()
			}
		})
	}
	go func() { wg.Wait(); close(w.done) }()
	return w
}

// bound closes w.lost when h's epoch ends or when d has passed; then, if
// the bound passed first, it releases h's node, after the signal, and
// reports true. A downgrade in progress (pin) finishes first; a node with
// a read node beside it is deleted without announcing its release (see
// Queue.Leave): the read node still blocks the writer behind.
func (w *watchedHold) bound(ctx context.Context, q *queue.Queue, h *queue.Held, d time.Duration,
	timer func(time.Duration) (<-chan time.Time, func() bool)) bool {
	if timer == nil {
		timer = func(d time.Duration) (<-chan time.Time, func() bool) { t := time.NewTimer(d); return t.C, t.Stop }
	}
	fire, stop := timer(d)
	defer stop()
	select {
	case <-h.Epoch.Done:
		close(w.lost)
	case <-fire:
		w.mu.Lock()
		w.expired = true
		close(w.lost)
		for w.pinned {
			w.cond.Wait()
		}
		release := q.Release
		if w.joined {
			release = q.Leave
		}
		w.mu.Unlock()
		_ = release(ctx, h) // stops at the epoch's end; Unlock retries
		return true
	case <-ctx.Done():
		close(w.lost) // released: nothing is held
	}
	return false
}

// pin holds off the bound's release of the node until unpin, for a
// downgrade placing a read node beside it. It reports false, pinning
// nothing, once the bound has passed. A nil w pins trivially.
func (w *watchedHold) pin() bool {
	if w == nil {
		return true
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.expired {
		return false
	}
	w.pinned = true
	return true
}

// unpin ends a pin; joined says a read node was created beside the node
// (even one being deleted again), whose release then must not announce.
func (w *watchedHold) unpin(joined bool) {
	if w == nil {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	w.joined = w.joined || joined
	w.pinned = false
	w.cond.Broadcast()
}

// end stops watching and reports whether the bound passed.
func (w *watchedHold) end() (expired bool) {
	if w == nil {
		return false
	}
	w.stop()
	<-w.done
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.expired
}
