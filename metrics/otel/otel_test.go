package otel_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	zkotel "github.com/zklock/zklock/metrics/otel"
	"github.com/zklock/zklock/zk"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
	"go.opentelemetry.io/otel/sdk/metric/metricdata/metricdatatest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// newProvider returns an SDK MeterProvider read by the returned
// ManualReader, shut down by t.Cleanup.
func newProvider(t *testing.T) (*sdkmetric.MeterProvider, *sdkmetric.ManualReader) {
	t.Helper()
	r := sdkmetric.NewManualReader()
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(r))
	t.Cleanup(func() { require.NoError(t, mp.Shutdown(context.Background())) })
	return mp, r
}

// collect returns what r holds, by instrument name, after checking that it
// all comes from zklock's meter.
func collect(t *testing.T, r *sdkmetric.ManualReader) map[string]metricdata.Metrics {
	t.Helper()
	var rm metricdata.ResourceMetrics
	require.NoError(t, r.Collect(context.Background(), &rm))
	require.Len(t, rm.ScopeMetrics, 1)
	require.Equal(t, zkotel.ScopeName, rm.ScopeMetrics[0].Scope.Name)
	out := make(map[string]metricdata.Metrics)
	for _, m := range rm.ScopeMetrics[0].Metrics {
		out[m.Name] = m
	}
	return out
}

var (
	mutexA = attribute.NewSet(attribute.String("zklock.kind", "mutex"), attribute.String("zklock.path", "/a"))
	semS   = attribute.NewSet(attribute.String("zklock.kind", "semaphore"), attribute.String("zklock.path", "/s"))
)

func withResult(lock attribute.Set, result string) attribute.Set {
	return attribute.NewSet(append(lock.ToSlice(), attribute.String("zklock.result", result))...)
}

func state(st string) attribute.Set {
	return attribute.NewSet(attribute.String("zklock.session.state", st))
}

func counter(name, unit, desc string, monotonic bool, points ...metricdata.DataPoint[int64]) metricdata.Metrics {
	return metricdata.Metrics{Name: name, Unit: unit, Description: desc, Data: metricdata.Sum[int64]{
		Temporality: metricdata.CumulativeTemporality, IsMonotonic: monotonic, DataPoints: points}}
}

func histogram(name, desc string, points ...metricdata.HistogramDataPoint[float64]) metricdata.Metrics {
	return metricdata.Metrics{Name: name, Unit: "s", Description: desc, Data: metricdata.Histogram[float64]{
		Temporality: metricdata.CumulativeTemporality, DataPoints: points}}
}

// hist is the data point of values recorded in buckets 0.5 and 2.
func hist(attrs attribute.Set, values ...float64) metricdata.HistogramDataPoint[float64] {
	p := metricdata.HistogramDataPoint[float64]{Attributes: attrs, Count: uint64(len(values)),
		Bounds: []float64{0.5, 2}, BucketCounts: make([]uint64, 3)}
	lo, hi := values[0], values[0]
	for _, v := range values {
		p.Sum += v
		lo, hi = min(lo, v), max(hi, v)
		switch {
		case v <= 0.5:
			p.BucketCounts[0]++
		case v <= 2:
			p.BucketCounts[1]++
		default:
			p.BucketCounts[2]++
		}
	}
	p.Min, p.Max = metricdata.NewExtrema(lo), metricdata.NewExtrema(hi)
	return p
}

// wantEveryInstrument is what TestEveryInstrument records.
func wantEveryInstrument() []metricdata.Metrics {
	states := []metricdata.DataPoint[int64]{}
	for _, st := range []string{"connecting", "connected", "suspended", "lost", "reconnected", "expired", "closed"} {
		v := int64(0)
		if st == "suspended" {
			v = 1
		}
		states = append(states, metricdata.DataPoint[int64]{Attributes: state(st), Value: v})
	}
	return []metricdata.Metrics{
		histogram("zklock.acquire.duration", "How long acquisitions took, by result.",
			hist(withResult(mutexA, "acquired"), 0.25, 1),
			hist(withResult(mutexA, "timeout"), 3),
			hist(withResult(semS, "busy"), 0.125)),
		counter("zklock.acquisitions", "{acquisition}", "Acquisitions granted.", true,
			metricdata.DataPoint[int64]{Attributes: mutexA, Value: 2}),
		counter("zklock.acquire.timeouts", "{acquisition}",
			"Acquisitions that failed because their context deadline passed.", true,
			metricdata.DataPoint[int64]{Attributes: mutexA, Value: 1}),
		counter("zklock.held", "{acquisition}", "Acquisitions held now.", false,
			metricdata.DataPoint[int64]{Attributes: mutexA, Value: 0}),
		histogram("zklock.hold.duration", "How long acquisitions were held, until released or lost.",
			hist(mutexA, 4, 0.75)),
		counter("zklock.losses", "{acquisition}",
			"Acquisitions lost while held: the ownership deadline passed or the session expired.", true,
			metricdata.DataPoint[int64]{Attributes: mutexA, Value: 1}),
		counter("zklock.session.transitions", "{transition}", "Session state transitions, by new state.", true,
			metricdata.DataPoint[int64]{Attributes: state("connected"), Value: 1},
			metricdata.DataPoint[int64]{Attributes: state("suspended"), Value: 1}),
		{Name: "zklock.session.state", Unit: "1", Description: "1 for the session state last reported, 0 for the others.",
			Data: metricdata.Gauge[int64]{DataPoints: states}},
	}
}

func TestEveryInstrument(t *testing.T) {
	mp, r := newProvider(t)
	m, err := zkotel.New(mp, zkotel.WithBuckets([]float64{0.5, 2}))
	require.NoError(t, err)

	m.AcquireWait(zklock.KindMutex, "/a", 250*time.Millisecond, nil)
	m.AcquireWait(zklock.KindMutex, "/a", time.Second, nil)
	m.AcquireWait(zklock.KindMutex, "/a", 3*time.Second, fmt.Errorf("lock: %w", context.DeadlineExceeded))
	m.AcquireWait(zklock.KindSemaphore, "/s", 125*time.Millisecond, zklock.ErrLocked)
	m.Hold(zklock.KindMutex, "/a", 4*time.Second)
	m.Loss(zklock.KindMutex, "/a")
	m.Hold(zklock.KindMutex, "/a", 750*time.Millisecond)
	m.SessionState(zk.StateConnected)
	m.SessionState(zk.StateSuspended)

	want := wantEveryInstrument()
	got := collect(t, r)
	require.Len(t, got, len(want))
	for _, w := range want {
		t.Run(w.Name, func(t *testing.T) {
			g, ok := got[w.Name]
			require.True(t, ok, "no instrument %s", w.Name)
			metricdatatest.AssertEqual(t, w, g, metricdatatest.IgnoreTimestamp())
		})
	}
}

func TestResultAttribute(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{nil, "acquired"},
		{zklock.ErrLocked, "busy"},
		{zklock.ErrLocked, "busy"},
		{context.DeadlineExceeded, "timeout"},
		{context.Canceled, "canceled"},
		{zklock.ErrSessionClosed, "error"},
	} {
		t.Run(tc.want+"/"+fmt.Sprint(tc.err), func(t *testing.T) {
			mp, r := newProvider(t)
			m, err := zkotel.New(mp)
			require.NoError(t, err)
			m.AcquireWait(zklock.KindMutex, "/a", time.Millisecond, tc.err)
			h := collect(t, r)["zklock.acquire.duration"].Data.(metricdata.Histogram[float64])
			require.Len(t, h.DataPoints, 1)
			require.Equal(t, withResult(mutexA, tc.want), h.DataPoints[0].Attributes)
			require.Equal(t, zkotel.DefaultBuckets, h.DataPoints[0].Bounds, "the default buckets")
		})
	}
}

func TestPathAttribute(t *testing.T) {
	mp, r := newProvider(t)
	m, err := zkotel.New(mp, zkotel.WithPathAttribute(func(string) string { return "jobs" }))
	require.NoError(t, err)
	m.AcquireWait(zklock.KindSemaphore, "/jobs/42", time.Millisecond, nil)
	m.Loss(zklock.KindSemaphore, "/jobs/43")
	m.Hold(zklock.KindSemaphore, "/jobs/42", time.Second)
	jobs := attribute.NewSet(attribute.String("zklock.kind", "semaphore"), attribute.String("zklock.path", "jobs"))
	for name, m := range collect(t, r) {
		switch d := m.Data.(type) {
		case metricdata.Sum[int64]:
			require.Len(t, d.DataPoints, 1, name)
			require.Equal(t, jobs, d.DataPoints[0].Attributes, name)
		case metricdata.Histogram[float64]:
			require.Len(t, d.DataPoints, 1, name)
			attrs := d.DataPoints[0].Attributes
			if name == "zklock.acquire.duration" {
				attrs, _ = attrs.Filter(func(kv attribute.KeyValue) bool { return kv.Key != "zklock.result" })
			}
			require.Equal(t, jobs, attrs, name)
		default:
			t.Fatalf("%s: unexpected %T", name, d)
		}
	}
}

// TestConcurrentUse runs every method from several goroutines at once (with
// -race) and checks that nothing was lost.
func TestConcurrentUse(t *testing.T) {
	mp, r := newProvider(t)
	m, err := zkotel.New(mp)
	require.NoError(t, err)
	const goroutines, rounds = 8, 100
	states := []zk.State{zk.StateConnected, zk.StateSuspended}
	var wg sync.WaitGroup
	for g := range goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range rounds {
				m.AcquireWait(zklock.KindMutex, "/a", time.Millisecond, nil)
				m.Loss(zklock.KindMutex, "/a")
				m.Hold(zklock.KindMutex, "/a", time.Millisecond)
				m.SessionState(states[g%2])
			}
		}()
	}
	wg.Wait()
	got := collect(t, r)
	for name, want := range map[string]int64{"zklock.acquisitions": goroutines * rounds,
		"zklock.losses": goroutines * rounds, "zklock.held": 0} {
		require.Equal(t, want, got[name].Data.(metricdata.Sum[int64]).DataPoints[0].Value, name)
	}
	require.Equal(t, uint64(goroutines*rounds),
		got["zklock.hold.duration"].Data.(metricdata.Histogram[float64]).DataPoints[0].Count)
	ones := 0
	for _, p := range got["zklock.session.state"].Data.(metricdata.Gauge[int64]).DataPoints {
		ones += int(p.Value)
	}
	require.Equal(t, 1, ones, "exactly one state is current")
}
