package prometheus_test

import (
	"context"
	"testing"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	zkprom "github.com/zklock/zklock/metrics/prometheus"
	"github.com/zklock/zklock/zktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// sample finds the metric of family name whose labels include want.
func sample(t *testing.T, reg *prom.Registry, name string, want map[string]string) *dto.Metric {
	t.Helper()
	families, err := reg.Gather()
	require.NoError(t, err)
	for _, f := range families {
		if f.GetName() != name {
			continue
		}
	next:
		for _, m := range f.GetMetric() {
			for k, v := range want {
				found := false
				for _, l := range m.GetLabel() {
					if l.GetName() == k && l.GetValue() == v {
						found = true
					}
				}
				if !found {
					continue next
				}
			}
			return m
		}
	}
	t.Fatalf("no %s with labels %v", name, want)
	return nil
}

func TestMetricsMoveThroughALockCycle(t *testing.T) {
	c := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := prom.NewRegistry()
	m := zkprom.New()
	require.NoError(t, reg.Register(m))

	open := func(opts ...zklock.SessionOption) *zklock.Session {
		s, err := zklock.NewSession(ctx, append(opts, zklock.WithServers(c.Servers()...),
			zklock.WithSessionTimeout(2*time.Second))...)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}
	s := open(zklock.WithMetrics(m))
	other := open()
	const path = "/zklock-test/prometheus/lock"
	mu, err := zklock.NewMutex(s, path)
	require.NoError(t, err)
	for range 3 {
		require.NoError(t, mu.Lock(ctx))
		time.Sleep(5 * time.Millisecond) // hold for a measurable time
		require.NoError(t, mu.Unlock(ctx))
	}
	theirs, err := zklock.NewMutex(other, path)
	require.NoError(t, err)
	require.NoError(t, theirs.Lock(ctx))
	require.ErrorIs(t, mu.TryLock(ctx), zklock.ErrLocked)
	tctx, tcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	require.ErrorIs(t, mu.Lock(tctx), context.DeadlineExceeded)
	tcancel()
	require.NoError(t, theirs.Unlock(ctx))
	require.NoError(t, mu.Lock(ctx)) // held while gathering

	lock := map[string]string{"kind": string(zklock.KindMutex), "path": path}
	with := func(k, v string) map[string]string {
		out := map[string]string{k: v}
		for k, v := range lock {
			out[k] = v
		}
		return out
	}
	require.Equal(t, 4.0, sample(t, reg, "zklock_acquisitions_total", lock).GetCounter().GetValue())
	require.Equal(t, 1.0, sample(t, reg, "zklock_acquire_timeouts_total", lock).GetCounter().GetValue())
	require.Equal(t, 1.0, sample(t, reg, "zklock_held", lock).GetGauge().GetValue())
	acquired := sample(t, reg, "zklock_acquire_wait_seconds", with("result", "acquired")).GetHistogram()
	require.Equal(t, uint64(4), acquired.GetSampleCount())
	require.Greater(t, acquired.GetSampleSum(), 0.0)
	require.Equal(t, uint64(1), sample(t, reg, "zklock_acquire_wait_seconds", with("result", "busy")).GetHistogram().GetSampleCount())
	timeout := sample(t, reg, "zklock_acquire_wait_seconds", with("result", "timeout")).GetHistogram()
	require.Equal(t, uint64(1), timeout.GetSampleCount())
	require.GreaterOrEqual(t, timeout.GetSampleSum(), 0.1, "it waited for its deadline")
	hold := sample(t, reg, "zklock_hold_seconds", lock).GetHistogram()
	require.Equal(t, uint64(3), hold.GetSampleCount())
	require.GreaterOrEqual(t, hold.GetSampleSum(), 0.015)
	require.Equal(t, 1.0, sample(t, reg, "zklock_session_state", map[string]string{"state": "connected"}).GetGauge().GetValue())

	// The session ends with the lock held: the hold is recorded and the gauge
	// drops, after Close has reported it.
	require.NoError(t, s.Close())
	require.Equal(t, 0.0, sample(t, reg, "zklock_held", lock).GetGauge().GetValue())
	require.Equal(t, uint64(4), sample(t, reg, "zklock_hold_seconds", lock).GetHistogram().GetSampleCount())
	require.Equal(t, 1.0, sample(t, reg, "zklock_session_state", map[string]string{"state": "closed"}).GetGauge().GetValue())
	require.Equal(t, 0.0, sample(t, reg, "zklock_session_state", map[string]string{"state": "connected"}).GetGauge().GetValue())
	require.Equal(t, 1.0, sample(t, reg, "zklock_session_transitions_total", map[string]string{"state": "closed"}).GetCounter().GetValue())
}

func TestResult(t *testing.T) {
	for err, want := range map[error]string{
		nil:                      "acquired",
		zklock.ErrLocked:         "busy",
		context.DeadlineExceeded: "timeout",
		context.Canceled:         "canceled",
		zklock.ErrSessionClosed:  "error",
	} {
		require.Equal(t, want, zkprom.Result(err), "%v", err)
	}
}

func TestCustomNamespaceAndPathLabel(t *testing.T) {
	reg := prom.NewRegistry()
	m := zkprom.New(zkprom.WithNamespace("app"), zkprom.WithPathLabel(func(string) string { return "jobs" }),
		zkprom.WithBuckets([]float64{1}))
	require.NoError(t, reg.Register(m))
	m.AcquireWait(zklock.KindSemaphore, "/jobs/42", time.Millisecond, nil)
	m.Loss(zklock.KindSemaphore, "/jobs/42")
	m.Hold(zklock.KindSemaphore, "/jobs/42", time.Second)
	labels := map[string]string{"kind": "semaphore", "path": "jobs"}
	require.Equal(t, 1.0, sample(t, reg, "app_acquisitions_total", labels).GetCounter().GetValue())
	require.Equal(t, 1.0, sample(t, reg, "app_losses_total", labels).GetCounter().GetValue())
	require.Equal(t, 0.0, sample(t, reg, "app_held", labels).GetGauge().GetValue())
	require.Len(t, sample(t, reg, "app_hold_seconds", labels).GetHistogram().GetBucket(), 1)
}

// A revocation request and a bounded hold's expiry, from a real Session,
// are counted. They are two holds: one with a bounded hold expires on its
// own clock, and a revocation sent to it after that would find nobody
// listening (on a loaded machine, Lock to Revoke can outlast a short bound).
func TestRecipeEvents(t *testing.T) {
	c := zktest.Start(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	reg := prom.NewRegistry()
	m := zkprom.New()
	require.NoError(t, reg.Register(m))
	s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...), zklock.WithMetrics(m))
	require.NoError(t, err)
	defer s.Close()
	const revocable, bounded = "/zklock-test/prometheus/revocable", "/zklock-test/prometheus/bounded"
	r, err := zklock.NewMutex(s, revocable, zklock.WithRevocable())
	require.NoError(t, err)
	require.NoError(t, r.Lock(ctx))
	_, err = zklock.Revoke(ctx, s, revocable)
	require.NoError(t, err)
	closedWithin(t, r.Revoked(), "Revoked")
	require.NoError(t, r.Unlock(ctx))
	b, err := zklock.NewMutex(s, bounded, zklock.WithMaxHold(200*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, b.Lock(ctx))
	closedWithin(t, b.Lost(), "Lost at the bounded hold's end")
	require.ErrorIs(t, b.Unlock(ctx), zklock.ErrLockLost)
	require.Equal(t, 1.0, sample(t, reg, "zklock_revocations_total",
		map[string]string{"kind": string(zklock.KindMutex), "path": revocable}).GetCounter().GetValue())
	require.Equal(t, 1.0, sample(t, reg, "zklock_hold_expiries_total",
		map[string]string{"kind": string(zklock.KindMutex), "path": bounded}).GetCounter().GetValue())
}

// closedWithin fails the test unless ch is closed within 30 seconds.
func closedWithin(t *testing.T, ch <-chan struct{}, what string) {
	t.Helper()
	select {
	case <-ch:
	case <-time.After(30 * time.Second):
		t.Fatalf("%s: not closed within 30s", what)
	}
}
