package zklock_test

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestUncontendedMutexCost counts what an uncontended Lock and Unlock cost
// the server: requests (the server's zk_packets_received; pipelined
// requests count one each) and round trips (through a proxy that delays
// each direction by 40ms, the time of a Lock and Unlock divided by one
// round trip, rounded). On a fresh path the parents are created in the
// pipeline ahead of the create; on an existing one, the create and the
// listing behind it are one round trip and the delete another.
func TestUncontendedMutexCost(t *testing.T) {
	const (
		rounds  = 10
		latency = 40 * time.Millisecond
	)
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Minute))
	p := zktest.NewProxy(t, c.Servers())
	// A ten-minute session pings every 200s: no ping falls in the count.
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(10*time.Minute))
	m, err := zklock.NewMutex(s, lockPath(t, "m"))
	require.NoError(t, err)
	ctx := ctxFor(t)
	lockUnlock := func() {
		require.NoError(t, m.Lock(ctx))
		require.NoError(t, m.Unlock(ctx))
	}
	// The session's first requests (the role survey's) are over once a
	// reply came after them: a Lock on a path that shares no parent.
	other, err := zklock.NewMutex(s, "/warm")
	require.NoError(t, err)
	require.NoError(t, other.Lock(ctx))
	require.NoError(t, other.Unlock(ctx))

	// Reading the counter is a request of its own: measure it idle.
	p0 := packets(t, c)
	p1 := packets(t, c)
	probe := p1 - p0
	lockUnlock() // the path is fresh: its parents are created
	p2 := packets(t, c)
	for range rounds {
		lockUnlock()
	}
	p3 := packets(t, c)
	fresh, existing := p2-p1-probe, float64(p3-p2-probe)/rounds

	p.SetLatency(latency)
	began := time.Now()
	for range rounds {
		lockUnlock()
	}
	trips := float64(time.Since(began)) / float64(rounds) / float64(2*latency)
	t.Logf("uncontended Lock+Unlock: %d requests on a fresh path (%d parents), %.1f on an existing path, %.2f round trips (%.0f rounded)",
		fresh, len(parents(lockPath(t, "m"))), existing, trips, math.Round(trips))
	require.LessOrEqual(t, existing, 3.0, "requests per Lock+Unlock on an existing path")
	require.LessOrEqual(t, math.Round(trips), 2.0, "round trips per Lock+Unlock")
}

// parents returns the ancestors of p, the root excluded, and p.
func parents(p string) []string {
	var out []string
	for i := 1; i < len(p); i++ {
		if p[i] == '/' {
			out = append(out, p[:i])
		}
	}
	return append(out, p)
}
