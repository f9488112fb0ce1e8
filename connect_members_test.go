package zklock_test

import (
	"context"
	"log/slog"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Issue 47, a newcomer's pass: one dead address beside a standalone server
// (WithServers(live, "127.0.0.1:1")) got a 900-character ErrTimingUnknown
// whose first sentence named neither the address nor why. The first
// sentence is the cause now: the address and what it did; what to do
// follows (a standalone server has no ensemble: remove the other).
func TestNewSessionNamesTheDeadAddressFirst(t *testing.T) {
	t.Parallel()
	live, dead := shared(t).Servers()[0], refusedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(live, dead), zklock.WithLogger(slog.New(&arrivals{})))
	require.Nil(t, s)
	require.ErrorIs(t, err, zklock.ErrTimingUnknown)
	msg := err.Error()
	first, _, _ := strings.Cut(msg, ". ")
	t.Logf("%d characters, the first sentence %d: %s", len(msg), len(first), msg)
	require.Contains(t, first, dead, "the first sentence does not name the dead address")
	require.Contains(t, first, "connection refused", "the first sentence does not say what the address did")
	require.LessOrEqual(t, len(first), 120, "the first sentence is not short")
	require.Contains(t, msg, live+" is a standalone server")
	require.Contains(t, msg, "remove")
	require.LessOrEqual(t, len(msg), 500)
}

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
	// A follower, so that no election follows and the time measured is
	// the dead member's.
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	follower := (leader + 1) % c.Len()
	require.NoError(t, c.Server(follower).Stop())
	dead, s := connect(8 * time.Second)
	timing := s.Client().Timing()
	t.Logf("NewSession with every member up: %v; with member %d (a follower) stopped: %v (timing %v×%d from %s)",
		all.Round(time.Millisecond), follower, dead.Round(time.Millisecond), timing.Tick, timing.SyncLimit, timing.Source)
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
