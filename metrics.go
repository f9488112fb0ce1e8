package zklock

import (
	"sync"
	"time"

	"github.com/zklock/zklock/internal/queue"
)

// Metrics receives measurements from every primitive of a Session (set
// with WithMetrics). The metrics/prometheus package exports them to
// Prometheus; the default is none, at no cost.
//
// kind is one of the Kind constants and path is the primitive's path as
// given to its constructor. Every granted acquisition is followed by exactly
// one Hold, when it is released or lost, so a gauge of what is held can be
// kept from AcquireWait and Hold.
//
// AcquireWait and Hold are called on the goroutine of the call that
// acquires or releases; Loss and SessionState on a goroutine of the
// session's, in the order things happened. Implementations must be safe for
// concurrent use, return quickly and not call back into the Session.
type Metrics interface {
	// AcquireWait reports an acquisition that went to the server (Lock,
	// TryLock, RLock, TryRLock, Acquire, TryAcquire, Campaign; not a
	// reentrant count): d is how long the call took and err what it returned,
	// nil when granted. A refused Try returns an error wrapping ErrLocked
	// (locks) or ErrNotAcquired (semaphores); a timeout,
	// context.DeadlineExceeded.
	AcquireWait(kind, path string, d time.Duration, err error)
	// Hold reports that a granted acquisition ended after d: released
	// (Unlock, RUnlock, Lease.Release, Resign) or lost.
	Hold(kind, path string, d time.Duration)
	// Loss reports that the loss signal of a held acquisition fired (the
	// ownership deadline passed or the session expired) before it was
	// released. Closing the Session while holding is not reported as a loss.
	Loss(kind, path string)
	// SessionState reports every session state transition.
	SessionState(st State)
}

// Kinds of primitive, as passed to Metrics.
const (
	KindMutex          = "mutex"
	KindReentrantMutex = "reentrant_mutex"
	KindRWMutexRead    = "rwmutex_read"
	KindRWMutexWrite   = "rwmutex_write"
	KindSemaphore      = "semaphore"
	KindElection       = "election"
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

// holdRec is a granted acquisition awaiting its Hold report.
type holdRec struct {
	kind, path string
	since      time.Time
}

// now returns the start of an acquisition for Metrics: the zero Time when
// there are none, so the hot path does not even read the clock.
func (s *Session) now() time.Time {
	if s.opts.metrics == nil {
		return time.Time{}
	}
	return time.Now()
}

// acquired reports an acquisition that began at start and, when h was
// granted, remembers it until released or endEpochLocked reports its Hold.
func (s *Session) acquired(kind, path string, start time.Time, h *queue.Held, err error) {
	m := s.opts.metrics
	if m == nil {
		return
	}
	now := time.Now()
	m.AcquireWait(kind, path, now.Sub(start), err)
	if err != nil || h == nil {
		return
	}
	s.mu.Lock()
	live := h.Epoch.Key == any(s.ep) && s.ep != nil
	closed := s.state == StateClosed
	if live {
		s.holds[h] = holdRec{kind, path, now}
	}
	s.mu.Unlock()
	if !live { // the epoch ended between the grant and now
		if !closed {
			m.Loss(kind, path)
		}
		m.Hold(kind, path, 0)
	}
}

// released reports the Hold of h, unless its loss already did.
func (s *Session) released(h *queue.Held) {
	m := s.opts.metrics
	if m == nil || h == nil {
		return
	}
	s.mu.Lock()
	rec, ok := s.holds[h]
	delete(s.holds, h)
	s.mu.Unlock()
	if ok {
		m.Hold(rec.kind, rec.path, time.Since(rec.since))
	}
}

// reportEpochEndLocked queues Loss (unless the session is closing) and Hold
// for every acquisition held in ep. s.mu must be held.
func (s *Session) reportEpochEndLocked(ep *epoch, closing bool) {
	m := s.opts.metrics
	if m == nil {
		return
	}
	now := time.Now()
	for h, rec := range s.holds {
		if h.Epoch.Key != any(ep) {
			continue
		}
		delete(s.holds, h)
		d := now.Sub(rec.since)
		s.reports.push(func() {
			if !closing {
				m.Loss(rec.kind, rec.path)
			}
			m.Hold(rec.kind, rec.path, d)
		}, false)
	}
}

// reportStateLocked queues the SessionState report of st. s.mu must be held.
func (s *Session) reportStateLocked(st State) {
	if m := s.opts.metrics; m != nil {
		s.reports.push(func() { m.SessionState(st) }, st == StateClosed)
	}
}

// reporter runs the Metrics calls that arise under s.mu, in order, on a
// goroutine of its own: the ZooKeeper client's goroutine, which publishes
// transitions, must never wait for a Metrics implementation, and a Metrics
// that called back into the Session would otherwise deadlock.
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
// StateClosed, so it ends by Close.
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
