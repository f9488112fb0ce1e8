//go:build openholes

package zklock_test

// Open holes: tests of attacks that still succeed, kept out of make test
// (CI) and run by make open-holes, where they fail until the hole is
// closed. docs/ownership.md states each with its figures.

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestBreakDeposedLeaderRevalidates: as TestBreakDeposedLeaderAnswers, but
// the evidence is a connect response (evidence.go counts every one as
// proof that the leader touched the session after the connect request was
// sent). The holder's client gives up its silent connection to the paused
// leader (its read timeout, two thirds of the session timeout) and
// connects to it again; when the old leader runs again it revalidates the
// session in its own session table, still believing it leads, and
// answers. A new leader took over while it was stopped.
func TestBreakDeposedLeaderRevalidates(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithPeerNetwork(), zktest.WithSessionTimeouts(200*time.Millisecond, 8*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	l, err := c.Leader(ctx)
	require.NoError(t, err)
	var rest []string
	var others []int
	for i := range 3 {
		if i != l {
			rest, others = append(rest, c.Server(i).Addr()), append(others, i)
		}
	}
	p := zktest.NewProxy(t, []string{c.Server(l).Addr()})
	holderS := newSession(t, p.Addrs(), zklock.WithSessionTimeout(8*time.Second))
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))

	rivalS := newSession(t, rest, zklock.WithSessionTimeout(8*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	var pausedAt time.Time
	cut := func() {
		_, _, err := holderS.Client().Exists(ctx, "/")
		require.NoError(t, err)
		pausedAt = time.Now()
		require.NoError(t, c.Server(l).Pause())
		eventually(t, 15*time.Second, "a new leader among the others", func() bool {
			for _, i := range others {
				out, err := c.FourLetter(ctx, i, "srvr")
				if err == nil && strings.Contains(out, "Mode: leader") {
					return true
				}
			}
			return false
		})
		newLeaderAt := time.Now()
		// The client gives up the silent connection 5.3s after the last
		// reply and connects again; the old leader runs again 0.4s later,
		// before the holder's deadline (6.4s after that reply).
		eventually(t, 8*time.Second, "the holder's client disconnected", func() bool {
			return holderS.State() == zklock.StateSuspended
		})
		suspendedAt := time.Now()
		wait := time.NewTimer(400 * time.Millisecond)
		<-wait.C
		require.NoError(t, c.Isolate(l))
		require.NoError(t, c.Server(l).Resume())
		eventually(t, 3*time.Second, "the holder's client reconnected", func() bool {
			return holderS.State() == zklock.StateReconnected
		})
		t.Logf("paused %v; new leader seen %v after the pause; client suspended %v after it; "+
			"reconnected %v after it; holder's deadline now %v after the pause",
			pausedAt.Format(time.StampMilli), newLeaderAt.Sub(pausedAt), suspendedAt.Sub(pausedAt),
			time.Since(pausedAt), holderS.OwnershipDeadline().Sub(pausedAt))
	}
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, cut)
	t.Logf("loss signal %v after the pause led the rival's acquisition by %v", lostAt.Sub(pausedAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}
