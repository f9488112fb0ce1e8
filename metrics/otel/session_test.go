package otel_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	zkotel "github.com/zklock/zklock/metrics/otel"
	"github.com/zklock/zklock/zktest"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// TestSession records a real Session's measurements: a Mutex locked and
// unlocked twice.
//
// The session is 10s (the server's default bound is 2s), so that a load
// that holds up its heartbeats does not leave it reconnecting when the
// state gauge is read: in make test at load 30 it read connected 0.
func TestSession(t *testing.T) {
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	mp, r := newProvider(t)
	m, err := zkotel.New(mp)
	require.NoError(t, err)
	s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...), zklock.WithMetrics(m),
		zklock.WithSessionTimeout(10*time.Second))
	require.NoError(t, err)
	t.Cleanup(func() { s.Close() })
	const path = "/zklock-test/otel/lock"
	mu, err := zklock.NewMutex(s, path)
	require.NoError(t, err)
	for range 2 {
		require.NoError(t, mu.Lock(ctx))
		time.Sleep(5 * time.Millisecond) // hold for a measurable time
		require.NoError(t, mu.Unlock(ctx))
	}

	lock := attribute.NewSet(attribute.String("zklock.kind", "mutex"), attribute.String("zklock.path", path))
	got := collect(t, r)
	sum := func(name string) metricdata.DataPoint[int64] {
		t.Helper()
		d := got[name].Data.(metricdata.Sum[int64]).DataPoints
		require.Len(t, d, 1, name)
		require.Equal(t, lock, d[0].Attributes, name)
		return d[0]
	}
	hist := func(name string, attrs attribute.Set) metricdata.HistogramDataPoint[float64] {
		t.Helper()
		d := got[name].Data.(metricdata.Histogram[float64]).DataPoints
		require.Len(t, d, 1, name)
		require.Equal(t, attrs, d[0].Attributes, name)
		return d[0]
	}
	require.Equal(t, int64(2), sum("zklock.acquisitions").Value)
	require.Equal(t, int64(0), sum("zklock.held").Value)
	hold := hist("zklock.hold.duration", lock)
	require.Equal(t, uint64(2), hold.Count)
	require.GreaterOrEqual(t, hold.Sum, 0.010)
	require.Equal(t, uint64(2), hist("zklock.acquire.duration", withResult(lock, "acquired")).Count)
	current := map[string]int64{}
	for _, p := range got["zklock.session.state"].Data.(metricdata.Gauge[int64]).DataPoints {
		st, _ := p.Attributes.Value("zklock.session.state")
		current[st.AsString()] = p.Value
	}
	require.Equal(t, int64(1), current["connected"])
	require.Equal(t, int64(0), current["connecting"])
}
