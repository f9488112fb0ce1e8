package zklock_test

// Adversarial tests of the ownership deadline (issue 32's fix), by the
// review of branch swap. Each test named TestBreak… encodes an attack; a
// failing one is a finding (see the test's comment for the analysis).

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestBreakDeposedLeaderAnswers: the holder reaches only the leader, whose
// replies count as proof of the leader's clock at their send time
// (evidence.go, the "direct" rule). But a leader can be deposed without
// knowing it: paused (a GC pause, SIGSTOP), it stops answering its
// followers, who elect a new leader after syncLimit*tickTime; the new
// leader restarts every session's clock when it takes over, at T_new.
// When the old leader runs again it still believes it leads (its tick
// counter did not move while it was stopped) and answers what its clients
// sent meanwhile before it notices. A request sent at s > T_new and
// answered then moves the holder's anchor to s, past what the new leader
// saw. The old leader then steps down; cut from its peers it cannot serve,
// and the holder reaches no one else: the new leader expires the session
// at T_new + timeout and grants the rival, while the holder's deadline is
// s + timeout - margin.
func TestBreakDeposedLeaderAnswers(t *testing.T) {
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
	// The connection is known to be the leader's once the deadline follows
	// replies at their send time (a timeout less the margin ahead), not a
	// follower's lag behind them.
	eventually(t, 5*time.Second, "the holder's link confirmed as the leader's", func() bool {
		_, _, _ = holderS.Client().Exists(ctx, "/")
		return time.Until(holderS.OwnershipDeadline()) > 6*time.Second
	})
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))

	rivalS := newSession(t, rest, zklock.WithSessionTimeout(8*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	var pausedAt, sentAt time.Time
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
		// The pause lasts 4.4s: less than the holder's deadline (6.4s after
		// its last reply) and its client's read timeout (5.3s).
		wait := time.NewTimer(time.Until(pausedAt.Add(4300 * time.Millisecond)))
		<-wait.C
		replied := make(chan error, 1)
		sentAt = time.Now()
		go func() {
			rctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			_, _, err := holderS.Client().Exists(rctx, "/")
			replied <- err
		}()
		wait.Reset(100 * time.Millisecond)
		<-wait.C
		require.NoError(t, c.Isolate(l))
		require.NoError(t, c.Server(l).Resume())
		err = <-replied
		t.Logf("paused %v; new leader seen %v after the pause; request sent %v after it, answered: %v; "+
			"holder's deadline now %v after the pause",
			pausedAt.Format(time.StampMilli), newLeaderAt.Sub(pausedAt), sentAt.Sub(pausedAt), err,
			holderS.OwnershipDeadline().Sub(pausedAt))
	}
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, cut)
	t.Logf("loss signal %v after the pause led the rival's acquisition by %v", lostAt.Sub(pausedAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}
