// Package otel records a zklock Session's measurements (see zklock.Metrics)
// through the OpenTelemetry metric API:
//
//	m, err := zkotel.New(meterProvider) // nil: the global MeterProvider
//	s, err := zklock.NewSession(ctx, zklock.WithMetrics(m), ...)
//
// (imported as zkotel "github.com/zklock/zklock/metrics/otel", beside
// OpenTelemetry's own otel package).
//
// Instruments, from the meter named ScopeName, named after OpenTelemetry's
// semantic conventions (kind, unit, attributes: meaning):
//
//	zklock.acquire.duration     histogram        s              kind, path, result: how long acquisitions took
//	zklock.acquisitions         counter          {acquisition}  kind, path: acquisitions granted
//	zklock.acquire.timeouts     counter          {acquisition}  kind, path: acquisitions whose ctx deadline passed
//	zklock.held                 up-down counter  {acquisition}  kind, path: acquisitions held now
//	zklock.hold.duration        histogram        s              kind, path: how long acquisitions were held
//	zklock.losses               counter          {acquisition}  kind, path: acquisitions lost while held
//	zklock.revocations          counter          {request}      kind, path: revocation requests a revocable holder received
//	zklock.hold.expiries        counter          {acquisition}  kind, path: bounded holds (WithMaxHold) that passed their bound
//	zklock.session.transitions  counter          {transition}   session.state: session state transitions
//	zklock.session.state        gauge            1              session.state: 1 for the state last reported, else 0
//
// kind, path, result and session.state stand for the attributes
// zklock.kind, zklock.path, zklock.result and zklock.session.state.
// zklock.kind is "mutex", "reentrant_mutex", "rwmutex_read",
// "rwmutex_write", "semaphore" or "election" (zklock.KindMutex and so on);
// zklock.path is the primitive's path (or what WithPathAttribute maps it
// to); zklock.result is "acquired", "busy"
// (a Try found the lock taken), "timeout", "canceled" or "error";
// zklock.session.state is a zklock.State's String ("connected",
// "suspended", ...). A lost acquisition is counted in zklock.losses and
// still ends with one zklock.hold.duration measurement. The
// zklock.session.state gauge describes one session: share a Metrics among
// sessions only if that gauge does not matter.
//
// The zklock.path attribute has one value per lock path: when paths are
// many (a lock per job or per user), map them to fewer values with
// WithPathAttribute.
//
// This package uses only the OpenTelemetry API; the program chooses the SDK
// and exporter. The root zklock package does not import OpenTelemetry; only
// programs that import this package do.
package otel

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// ScopeName is the name of the meter the instruments are created from.
const ScopeName = "github.com/zklock/zklock/metrics/otel"

// Attribute keys.
const (
	keyKind  = attribute.Key("zklock.kind")
	keyPath  = attribute.Key("zklock.path")
	keyRes   = attribute.Key("zklock.result")
	keyState = attribute.Key("zklock.session.state")
)

// Metrics is a zklock.Metrics that records through OpenTelemetry
// instruments. Pass it to zklock.WithMetrics. It is safe for concurrent use.
type Metrics struct {
	path func(string) string

	wait         metric.Float64Histogram
	acquisitions metric.Int64Counter
	timeouts     metric.Int64Counter
	held         metric.Int64UpDownCounter
	hold         metric.Float64Histogram
	losses       metric.Int64Counter
	revocations  metric.Int64Counter
	expiries     metric.Int64Counter
	transitions  metric.Int64Counter
	state        metric.Int64Gauge

	mu sync.Mutex // orders SessionState's gauge updates
}

var (
	_ zklock.Metrics = (*Metrics)(nil)
)

// New returns Metrics whose instruments come from mp's meter named
// ScopeName. A nil mp means the global otel.GetMeterProvider(), whose
// instruments forward to whatever provider otel.SetMeterProvider installs,
// even later. The defaults are DefaultBuckets and the path as it is. New
// returns an error wrapping zklock.ErrInvalidArgument for a bad option, and
// one wrapping the provider's errors when it cannot create an instrument.
func New(mp metric.MeterProvider, opts ...Option) (*Metrics, error) {
	o := options{buckets: DefaultBuckets, path: func(p string) string { return p }}
	for _, opt := range opts {
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	if mp == nil {
		mp = otel.GetMeterProvider()
	}
	m := &Metrics{path: o.path}
	if err := m.instruments(mp.Meter(ScopeName), o.buckets); err != nil {
		return nil, fmt.Errorf("zklock: otel instruments: %w", err)
	}
	return m, nil
}

// instruments creates m's instruments from meter, with histogram buckets.
// Each is created even when another fails, so that the error names every
// instrument the provider refused.
func (m *Metrics) instruments(meter metric.Meter, buckets []float64) error {
	var errs []error
	must := func(err error) { errs = append(errs, err) }
	acq := metric.WithUnit("{acquisition}")
	seconds, bounds := metric.WithUnit("s"), metric.WithExplicitBucketBoundaries(buckets...)
	var err error
	m.wait, err = meter.Float64Histogram("zklock.acquire.duration", seconds, bounds,
		metric.WithDescription("How long acquisitions took, by result."))
	must(err)
	m.acquisitions, err = meter.Int64Counter("zklock.acquisitions", acq,
		metric.WithDescription("Acquisitions granted."))
	must(err)
	m.timeouts, err = meter.Int64Counter("zklock.acquire.timeouts", acq,
		metric.WithDescription("Acquisitions that failed because their context deadline passed."))
	must(err)
	m.held, err = meter.Int64UpDownCounter("zklock.held", acq,
		metric.WithDescription("Acquisitions held now."))
	must(err)
	m.hold, err = meter.Float64Histogram("zklock.hold.duration", seconds, bounds,
		metric.WithDescription("How long acquisitions were held, until released or lost."))
	must(err)
	m.losses, err = meter.Int64Counter("zklock.losses", acq,
		metric.WithDescription("Acquisitions lost while held: the ownership deadline passed or the session expired."))
	must(err)
	m.revocations, err = meter.Int64Counter("zklock.revocations", metric.WithUnit("{request}"),
		metric.WithDescription("Revocation requests a revocable holder received."))
	must(err)
	m.expiries, err = meter.Int64Counter("zklock.hold.expiries", acq,
		metric.WithDescription("Bounded holds (WithMaxHold) that passed their bound."))
	must(err)
	m.transitions, err = meter.Int64Counter("zklock.session.transitions", metric.WithUnit("{transition}"),
		metric.WithDescription("Session state transitions, by new state."))
	must(err)
	m.state, err = meter.Int64Gauge("zklock.session.state", metric.WithUnit("1"),
		metric.WithDescription("1 for the session state last reported, 0 for the others."))
	must(err)
	return errors.Join(errs...)
}

// result returns the zklock.result attribute of an acquisition that
// returned err.
func result(err error) string {
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

// lockAttrs returns the attributes of the primitive kind at path.
func (m *Metrics) lockAttrs(kind, path string) metric.MeasurementOption {
	return metric.WithAttributeSet(attribute.NewSet(keyKind.String(string(kind)), keyPath.String(m.path(path))))
}

// AcquireWait implements zklock.Metrics.
func (m *Metrics) AcquireWait(kind zklock.Kind, path string, d time.Duration, err error) {
	ctx := context.Background()
	path = m.path(path)
	res := result(err)
	m.wait.Record(ctx, d.Seconds(), metric.WithAttributeSet(attribute.NewSet(
		keyKind.String(string(kind)), keyPath.String(path), keyRes.String(res))))
	lock := metric.WithAttributeSet(attribute.NewSet(keyKind.String(string(kind)), keyPath.String(path)))
	switch res {
	case "acquired":
		m.acquisitions.Add(ctx, 1, lock)
		m.held.Add(ctx, 1, lock)
	case "timeout":
		m.timeouts.Add(ctx, 1, lock)
	}
}

// Hold implements zklock.Metrics.
func (m *Metrics) Hold(kind zklock.Kind, path string, d time.Duration) {
	ctx := context.Background()
	lock := m.lockAttrs(string(kind), path)
	m.hold.Record(ctx, d.Seconds(), lock)
	m.held.Add(ctx, -1, lock)
}

// Loss implements zklock.Metrics.
func (m *Metrics) Loss(kind zklock.Kind, path string) {
	m.losses.Add(context.Background(), 1, m.lockAttrs(string(kind), path))
}

// Revoked implements zklock.Metrics.
func (m *Metrics) Revoked(kind zklock.Kind, path string) {
	m.revocations.Add(context.Background(), 1, m.lockAttrs(string(kind), path))
}

// Expired implements zklock.Metrics.
func (m *Metrics) Expired(kind zklock.Kind, path string) {
	m.expiries.Add(context.Background(), 1, m.lockAttrs(string(kind), path))
}

// allStates are the states the zklock.session.state gauge has a value for.
var allStates = []zk.State{zk.
	StateConnecting, zk.StateConnected, zk.StateSuspended, zk.StateLost, zk.
	StateReconnected, zk.StateExpired, zk.StateClosed,
}

// SessionState implements zklock.Metrics.
func (m *Metrics) SessionState(st zk.State) {
	ctx := context.Background()
	m.transitions.Add(ctx, 1, metric.WithAttributeSet(attribute.NewSet(keyState.String(st.String()))))
	// Under mu, so that two transitions reported at once cannot leave two
	// states at 1.
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, s := range allStates {
		var v int64
		if s == st {
			v = 1
		}
		m.state.Record(ctx, v, metric.WithAttributeSet(attribute.NewSet(keyState.String(s.String()))))
	}
}
