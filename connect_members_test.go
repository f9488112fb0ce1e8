package zklock_test

import (
	"log/slog"
	"net"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Issue 47: one dead member in the server list cost every NewSession 3.1 s:
// the survey of the servers' timing asked the refusing address six times,
// pausing 100 ms doubling in between. A refused connection is not asked
// again (the member is asked before any connect to it), so the session
// is up in the time its live members take; the timing still comes from the
// members that told ('conf'), as with the dead member absent.
func TestNewSessionDeadMemberCostsNoWait(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3)
	ctx := ctxFor(t)
	connect := func(timeout time.Duration) (time.Duration, *zklock.Session) {
		began := time.Now()
		s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...), zklock.WithSessionTimeout(timeout),
			zklock.WithLogger(slog.New(&arrivals{})))
		took := time.Since(began)
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return took, s
	}
	all, _ := connect(8 * time.Second)
	require.NoError(t, c.Server(2).Stop())
	dead, s := connect(8 * time.Second)
	timing := s.Client().Timing()
	t.Logf("NewSession with every member up: %v; with member 2 stopped: %v (timing %v×%d from %s)",
		all.Round(time.Millisecond), dead.Round(time.Millisecond), timing.Tick, timing.SyncLimit, timing.Source)
	require.Equal(t, "conf", timing.Source, "the timing no longer comes from the members that told")
	require.Equal(t, c.TickTime(), timing.Tick)
	require.Equal(t, c.SyncLimit(), timing.SyncLimit)
	require.Less(t, dead, 3*time.Second, "the dead member still costs the survey's 3.1 s of retries")
}

// refusedAddr returns a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	return addr
}
