package zklock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestUncontendedMutexCost counts what an uncontended Lock and Unlock cost
// the server: requests (the server's zk_packets_received; pipelined
// requests count one each) and round trips. Round trips are counted
// through a proxy that delays each direction by a second, as bursts of
// requests reaching the server: the requests of one round trip are sent
// without waiting for a reply, so they arrive within moments of each
// other, and the next round trip's cannot arrive before the reply has gone
// down and the request up, two seconds later. On a fresh path the parents
// are created in the pipeline ahead of the create; on an existing one, the
// create and the listing behind it are one round trip and the delete
// another.
func TestUncontendedMutexCost(t *testing.T) {
	t.Parallel()
	const (
		rounds  = 10
		latency = time.Second
	)
	// Containers are reaped once empty, zktest's servers check every
	// second: a lock path emptied by Unlock would then be reaped before the
	// next Lock in a slow round trip, which creates it again (one round
	// trip more, a fresh path's cost). ZooKeeper's own default is a minute.
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Minute),
		zktest.WithContainerCheckInterval(time.Hour))
	p := zktest.NewProxy(t, c.Servers())
	// A ten-minute session pings after 10s without a request: no ping
	// falls among the counted packets.
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

	var mu sync.Mutex
	var arrivals []time.Time
	p.ResetAfterRequest(func(op int32) bool { // never resets: it only watches the requests go up
		if op != 11 { // a ping
			mu.Lock()
			arrivals = append(arrivals, time.Now())
			mu.Unlock()
		}
		return false
	})
	p.SetLatency(latency)
	const slow = 2
	for range slow {
		lockUnlock()
	}
	p.Heal()
	mu.Lock()
	bursts := 0
	for i, at := range arrivals {
		if i == 0 || at.Sub(arrivals[i-1]) > latency {
			bursts++
		}
	}
	requests := len(arrivals)
	mu.Unlock()
	t.Logf("uncontended Lock+Unlock: %d requests on a fresh path (%d parents), %.1f on an existing path; "+
		"through a 1s proxy: %d requests in %d round trips per Lock+Unlock",
		fresh, len(parents(lockPath(t, "m"))), existing, requests/slow, bursts/slow)
	require.LessOrEqual(t, existing, 3.0, "requests per Lock+Unlock on an existing path")
	require.Equal(t, 2*slow, bursts, "round trips: one for the create and its listing, one for the delete")
	require.Equal(t, 3*slow, requests, "requests through the proxy")
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
