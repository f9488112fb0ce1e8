// Package prometheus exports a zklock Session's measurements (see
// zklock.Metrics) as Prometheus metrics:
//
//	m := prometheus.New()
//	registry.MustRegister(m)
//	s, err := zklock.NewSession(ctx, zklock.WithMetrics(m), ...)
//
// Metrics, with the default namespace "zklock":
//
//	zklock_acquire_wait_seconds{kind,path,result}  histogram: how long acquisitions took
//	zklock_acquisitions_total{kind,path}           counter: acquisitions granted
//	zklock_acquire_timeouts_total{kind,path}       counter: acquisitions whose ctx deadline passed
//	zklock_held{kind,path}                         gauge: acquisitions held now
//	zklock_hold_seconds{kind,path}                 histogram: how long acquisitions were held
//	zklock_losses_total{kind,path}                 counter: acquisitions lost while held
//	zklock_revocations_total{kind,path}            counter: revocation requests a revocable holder received
//	zklock_hold_expiries_total{kind,path}          counter: bounded holds (WithMaxHold) that passed their bound
//	zklock_session_transitions_total{state}        counter: session state transitions
//	zklock_session_state{state}                    gauge: 1 for the state last reported, else 0
//
// kind is "mutex", "reentrant_mutex", "rwmutex_read", "rwmutex_write",
// "semaphore" or "election" (zklock.KindMutex and so on); result is
// "acquired", "busy" (a Try found the lock taken), "timeout", "canceled" or
// "error". The session_state gauge describes one session: share a Metrics
// among sessions only if that gauge does not matter.
//
// The path label has one value per lock path: when paths are many (a lock
// per job or per user), map them to fewer values with WithPathLabel.
//
// The root zklock package does not import Prometheus; only programs that
// import this package do.
package prometheus

import (
	"context"
	"errors"
	"sync"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Metrics is a zklock.Metrics and a prometheus.Collector. Register it with
// a registry and pass it to zklock.WithMetrics. It is safe for concurrent
// use.
type Metrics struct {
	path func(string) string

	wait         *prom.HistogramVec
	acquisitions *prom.CounterVec
	timeouts     *prom.CounterVec
	held         *prom.GaugeVec
	hold         *prom.HistogramVec
	losses       *prom.CounterVec
	revocations  *prom.CounterVec
	expiries     *prom.CounterVec
	transitions  *prom.CounterVec
	state        *prom.GaugeVec

	mu sync.Mutex // orders SessionState's gauge updates
}

var (
	_ zklock.Metrics = (*Metrics)(nil)
	_ prom.Collector = (*Metrics)(nil)
)

// Option configures New.
type Option func(*options)

type options struct {
	namespace string
	buckets   []float64
	path      func(string) string
}

// WithNamespace sets the metric name prefix. The default is "zklock".
func WithNamespace(ns string) Option { return func(o *options) { o.namespace = ns } }

// WithBuckets sets the upper bounds, in seconds, of the wait and hold
// histograms. The default is DefaultBuckets.
func WithBuckets(b []float64) Option {
	return func(o *options) { o.buckets = append([]float64(nil), b...) }
}

// WithPathLabel maps each lock path to the value of the path label, for
// example to strip a per-job suffix, or to "" to drop the detail. The
// default keeps the path as it is.
func WithPathLabel(f func(path string) string) Option { return func(o *options) { o.path = f } }

// DefaultBuckets spans 1ms to about 4.4 minutes, by factors of 4: lock waits
// and holds range from a round trip to a long batch job.
var DefaultBuckets = prom.ExponentialBuckets(0.001, 4, 10)

// New returns Metrics with no values yet.
func New(opts ...Option) *Metrics {
	o := options{namespace: "zklock", buckets: DefaultBuckets, path: func(p string) string { return p }}
	for _, opt := range opts {
		opt(&o)
	}
	if o.path == nil {
		o.path = func(p string) string { return p }
	}
	lock := []string{"kind", "path"}
	name := func(n string) string { return prom.BuildFQName(o.namespace, "", n) }
	return &Metrics{
		path: o.path,
		wait: prom.NewHistogramVec(prom.HistogramOpts{Name: name("acquire_wait_seconds"),
			Help: "How long acquisitions took, by result.", Buckets: o.buckets},
			[]string{"kind", "path", "result"}),
		acquisitions: prom.NewCounterVec(prom.CounterOpts{Name: name("acquisitions_total"),
			Help: "Acquisitions granted."}, lock),
		timeouts: prom.NewCounterVec(prom.CounterOpts{Name: name("acquire_timeouts_total"),
			Help: "Acquisitions that failed because their context deadline passed."}, lock),
		held: prom.NewGaugeVec(prom.GaugeOpts{Name: name("held"),
			Help: "Acquisitions held now."}, lock),
		hold: prom.NewHistogramVec(prom.HistogramOpts{Name: name("hold_seconds"),
			Help: "How long acquisitions were held, until released or lost.", Buckets: o.buckets}, lock),
		losses: prom.NewCounterVec(prom.CounterOpts{Name: name("losses_total"),
			Help: "Acquisitions lost while held: the ownership deadline passed or the session expired."}, lock),
		revocations: prom.NewCounterVec(prom.CounterOpts{Name: name("revocations_total"),
			Help: "Revocation requests a revocable holder received."}, lock),
		expiries: prom.NewCounterVec(prom.CounterOpts{Name: name("hold_expiries_total"),
			Help: "Bounded holds (WithMaxHold) that passed their bound."}, lock),
		transitions: prom.NewCounterVec(prom.CounterOpts{Name: name("session_transitions_total"),
			Help: "Session state transitions, by new state."}, []string{"state"}),
		state: prom.NewGaugeVec(prom.GaugeOpts{Name: name("session_state"),
			Help: "1 for the session state last reported, 0 for the others."}, []string{"state"}),
	}
}

func (m *Metrics) collectors() []prom.Collector {
	return []prom.Collector{m.wait, m.acquisitions, m.timeouts, m.held, m.hold, m.losses, m.revocations,
		m.expiries, m.transitions, m.state}
}

// Describe implements prometheus.Collector.
func (m *Metrics) Describe(ch chan<- *prom.Desc) {
	for _, c := range m.collectors() {
		c.Describe(ch)
	}
}

// Collect implements prometheus.Collector.
func (m *Metrics) Collect(ch chan<- prom.Metric) {
	for _, c := range m.collectors() {
		c.Collect(ch)
	}
}

// Result returns the result label of an acquisition that returned err.
func Result(err error) string {
	switch {
	case err == nil:
		return "acquired"
	case errors.Is(err, zklock.ErrLocked):
		return "busy"
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// AcquireWait implements zklock.Metrics.
func (m *Metrics) AcquireWait(kind zklock.Kind, path string, d time.Duration, err error) {
	path = m.path(path)
	result := Result(err)
	m.wait.WithLabelValues(string(kind), path, result).Observe(d.Seconds())
	switch result {
	case "acquired":
		m.acquisitions.WithLabelValues(string(kind), path).Inc()
		m.held.WithLabelValues(string(kind), path).Inc()
	case "timeout":
		m.timeouts.WithLabelValues(string(kind), path).Inc()
	}
}

// Hold implements zklock.Metrics.
func (m *Metrics) Hold(kind zklock.Kind, path string, d time.Duration) {
	path = m.path(path)
	m.hold.WithLabelValues(string(kind), path).Observe(d.Seconds())
	m.held.WithLabelValues(string(kind), path).Dec()
}

// Loss implements zklock.Metrics.
func (m *Metrics) Loss(kind zklock.Kind, path string) {
	m.losses.WithLabelValues(string(kind), m.path(path)).Inc()
}

// Revoked implements zklock.Metrics.
func (m *Metrics) Revoked(kind zklock.Kind, path string) {
	m.revocations.WithLabelValues(string(kind), m.path(path)).Inc()
}

// Expired implements zklock.Metrics.
func (m *Metrics) Expired(kind zklock.Kind, path string) {
	m.expiries.WithLabelValues(string(kind), m.path(path)).Inc()
}

// allStates are the states the session_state gauge has a series for.
var allStates = []zk.State{zk.
	StateConnecting, zk.StateConnected, zk.StateSuspended, zk.StateLost, zk.
	StateReconnected, zk.StateExpired, zk.StateClosed,
}

// SessionState implements zklock.Metrics.
func (m *Metrics) SessionState(st zk.State) {
	m.transitions.WithLabelValues(st.String()).Inc()
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range allStates {
		v := 0.0
		if s == st {
			v = 1
		}
		m.state.WithLabelValues(s.String()).Set(v)
	}
}
