package zklock

import (
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// Metrics receives measurements from every primitive of a Session, set with
// WithMetrics (the default is none, at no cost); packages metrics/prometheus
// and metrics/otel implement it. kind is one of the Kind constants and path
// the primitive's path as given to its constructor. Every granted
// acquisition is followed by exactly one Hold, when it is released or lost,
// so a gauge of what is held can be kept from AcquireWait and Hold.
//
// AcquireWait and Hold are called on the goroutine of the call that
// acquires or releases; the others on a goroutine of the session's, in the
// order things happened. Implementations must be safe for concurrent use,
// return quickly and not call back into the Session.
type Metrics interface {
	// AcquireWait reports an acquisition that went to the server (Lock,
	// TryLock, RLock, TryRLock, Acquire, TryAcquire, Campaign; not a
	// reentrant count) that took d and returned err: nil when granted, an
	// error wrapping ErrLocked for a refused Try, context.DeadlineExceeded
	// for a timeout.
	AcquireWait(kind Kind, path string, d time.Duration, err error)
	// Hold reports that a granted acquisition ended after d: released
	// (Unlock, RUnlock, Lease.Release, Resign) or lost.
	Hold(kind Kind, path string, d time.Duration)
	// Loss reports that a held acquisition's loss signal fired (ownership
	// deadline or session expiry) before its release; closing the Session is
	// not a loss.
	Loss(kind Kind, path string)
	// SessionState reports every session state transition.
	SessionState(st zk.State)
	// Revoked reports a revocation request to a holder (WithRevocable).
	Revoked(kind Kind, path string)
	// Expired reports that a hold passed its bound (WithMaxHold): its loss
	// signal fired and its node is being released.
	Expired(kind Kind, path string)
}

// Kind names a kind of primitive: in metrics (the kind argument of
// Metrics' methods), in WrongKindError.Found and in Contender.Kind.
// Besides the constants below, WrongKindError.Found (and Contender.Kind)
// can hold the kind of a peer's node that a zklock primitive meets on a
// path: "curator_leader_latch" (Curator's LeaderLatch) and
// "kazoo_read_lock" (Kazoo's ReadLock).
type Kind string

// The kinds of zklock's primitives.
const (
	KindMutex           Kind = "mutex"
	KindReentrantMutex  Kind = "reentrant_mutex"
	KindRWMutexRead     Kind = "rwmutex_read"
	KindRWMutexWrite    Kind = "rwmutex_write"
	KindRWMutex         Kind = "rwmutex"          // a read-write lock's path as a whole, in LockState
	KindSemaphore       Kind = "semaphore"        // Curator's layout
	KindSemaphorePermit Kind = "semaphore_permit" // WithPermitLayout
	KindMutexSeq        Kind = "mutex_seq"        // a Mutex WithSequenceLayout (unreleased)
	KindElection        Kind = "election"

	// Peers' nodes (see Kind).
	kindCuratorLeaderLatch Kind = "curator_leader_latch"
	kindKazooReadLock      Kind = "kazoo_read_lock"
)

// WithMetrics sends the session's measurements to m. The default is none.
func WithMetrics(m Metrics) SessionOption {
	return func(o *sessionOptions) error {
		if m == nil {
			return invalid("nil metrics")
		}
		o.metrics = m
		return nil
	}
}

// metricsState is a Session's Metrics bookkeeping: the granted
// acquisitions awaiting their Hold report, and the reports that arise under
// the session machine's lock, run in order on a goroutine of their own. A
// nil *metricsState (no WithMetrics) does nothing, at no cost.
type metricsState struct {
	m       Metrics
	closing atomic.Bool // the session is closed: an epoch's end is no loss
	mu      sync.Mutex
	holds   map[*queue.Held]holdRec
	reports reporter
	done    chan struct{} // closed when the reporter has run StateClosed's report
}

// holdRec is a granted acquisition awaiting its Hold report.
type holdRec struct {
	kind  Kind
	path  string
	since time.Time
}

// newMetricsState starts the reporter; it ends once zk.StateClosed, which
// every session publishes when it closes, has been reported.
func newMetricsState(m Metrics) *metricsState {
	ms := &metricsState{m: m, holds: make(map[*queue.Held]holdRec), done: make(chan struct{})}
	ms.reports.wake = make(chan struct{}, 1)
	go func() {
		defer close(ms.done)
		ms.reports.run()
	}()
	return ms
}

// wait returns once the reporter has ended.
func (ms *metricsState) wait() {
	if ms != nil {
		<-ms.done
	}
}

// now returns the start of an acquisition for Metrics: the zero Time when
// there are none, so the hot path does not even read the clock.
// The metrics state is the hold engine's Events (internal/hold).

// Now returns the time an acquisition starts.
func (ms *metricsState) Now() time.Time { return time.Now() }

// Acquired reports an acquisition that started at start, and begins the
// hold it granted (h, the node that identifies it).
func (ms *metricsState) Acquired(k errs.Kind, path string, start time.Time, h *queue.Held, err error) {
	kind := Kind(k)
	now := time.Now()
	ms.m.AcquireWait(kind, path, now.Sub(start), err)
	if err != nil || h == nil {
		return
	}
	ms.mu.Lock()
	live := true
	select {
	case <-h.Epoch.Done:
		live = false
	default:
		ms.holds[h] = holdRec{kind, path, now}
	}
	ms.mu.Unlock()
	if !live { // the epoch ended between the grant and now
		if !ms.closing.Load() {
			ms.m.Loss(kind, path)
		}
		ms.m.Hold(kind, path, 0)
	}
}

// Released ends the hold h identifies.
func (ms *metricsState) Released(h *queue.Held) {
	ms.mu.Lock()
	rec, ok := ms.holds[h]
	delete(ms.holds, h)
	ms.mu.Unlock()
	if ok {
		ms.m.Hold(rec.kind, rec.path, time.Since(rec.since))
	}
}

// Revoked and Expired report a revocation request heard (WithRevocable)
// and a bound passed (WithMaxHold).
func (ms *metricsState) Revoked(kind errs.Kind, path string) { ms.m.Revoked(Kind(kind), path) }

func (ms *metricsState) Expired(kind errs.Kind, path string) { ms.m.Expired(Kind(kind), path) }

func (ms *metricsState) epochEnded(key any, closing bool) {
	if ms == nil {
		return
	}
	now := time.Now()
	ms.mu.Lock()
	defer ms.mu.Unlock()
	for h, rec := range ms.holds {
		if h.Epoch.Key != key {
			continue
		}
		delete(ms.holds, h)
		d := now.Sub(rec.since)
		ms.reports.push(func() {
			if !closing {
				ms.m.Loss(rec.kind, rec.path)
			}
			ms.m.Hold(rec.kind, rec.path, d)
		}, false)
	}
}

// state queues the SessionState report of st.
func (ms *metricsState) state(st zk.State) {
	if ms != nil {
		if st == zk.StateClosed {
			ms.closing.Store(true)
		}
		ms.reports.push(func() { ms.m.SessionState(st) }, st == zk.StateClosed)
	}
}

// reporter runs the Metrics calls that arise under the session machine's
// lock, in order, on a goroutine of its own: the ZooKeeper client's
// goroutine, which publishes transitions, must never wait for a Metrics
// implementation, and a Metrics that called back into the Session would
// otherwise deadlock.
type reporter struct {
	mu   sync.Mutex
	fs   []func()
	last bool          // the final report (StateClosed) is queued
	wake chan struct{} // capacity 1
}

func (r *reporter) push(f func(), last bool) {
	r.mu.Lock()
	if !r.last {
		r.fs = append(r.fs, f)
		r.last = last
	}
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run makes the queued calls until the final one; every Session publishes
// zk.StateClosed, so it ends by Close.
func (r *reporter) run() {
	for {
		r.mu.Lock()
		fs, last := r.fs, r.last
		r.fs = nil
		r.mu.Unlock()
		for _, f := range fs {
			f()
		}
		if last {
			return
		}
		<-r.wake
	}
}
