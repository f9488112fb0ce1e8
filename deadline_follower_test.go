package zklock_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// The tests in this file put a holder on a follower that is then cut off
// from its leader. Only the leader expires sessions; the follower forwards
// its clients' touches on the leader's pings and goes on answering them for
// up to syncLimit*tickTime after it last heard from the leader. The holder's
// loss signal must still fire before the leader lets a rival in.

// followerEnsemble starts a three-server ensemble with a peer network and
// returns it with the index of a follower and the addresses of the other
// two servers.
func followerEnsemble(t *testing.T, opts ...zktest.Option) (c *zktest.Cluster, follower int, rest []string) {
	t.Helper()
	c = zktest.StartEnsemble(t, 3, append([]zktest.Option{zktest.WithPeerNetwork()}, opts...)...)
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	follower = (leader + 1) % 3
	for i := range 3 {
		if i != follower {
			rest = append(rest, c.Server(i).Addr())
		}
	}
	return c, follower, rest
}

// TestFollowerCutOffHolderLosesBeforeRival: the holder reaches only its
// follower, and that follower is isolated from its peers (the chaos suite's
// timing: tick 100ms, syncLimit 15). The leader expires the holder's session
// one timeout after the last touch that reached it; the follower's replies
// in between must not have moved the holder's deadline past that.
func TestFollowerCutOffHolderLosesBeforeRival(t *testing.T) {
	c, f, rest := followerEnsemble(t, zktest.WithSessionTimeouts(200*time.Millisecond, 4*time.Second))
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	holderS := newSession(t, []string{c.Server(f).Addr()}, zklock.WithSessionTimeout(3*time.Second))
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))

	rivalS := newSession(t, rest, zklock.WithSessionTimeout(3*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() { require.NoError(t, c.Isolate(f)) })
	t.Logf("loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}

// TestFollowerServingPastTimeoutRefused: servers whose followers serve for
// syncLimit*tickTime = 3s after losing their leader, and a 2s session: no
// deadline can be both safe and in the future, so NewSession refuses with
// the numbers instead of pretending.
func TestFollowerServingPastTimeoutRefused(t *testing.T) {
	c, _, _ := followerEnsemble(t, zktest.WithTickTime(200*time.Millisecond),
		zktest.WithSessionTimeouts(400*time.Millisecond, 8*time.Second))
	_, err := zklock.NewSession(ctxFor(t), zklock.WithServers(c.Servers()...), zklock.WithSessionTimeout(2*time.Second))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	for _, want := range []string{"2s", "syncLimit", "3s"} {
		require.Contains(t, err.Error(), want)
	}
	t.Log(err)
}

// TestFollowerServingLongHolderLosesBeforeRival: the same servers (a
// follower serves 3s without its leader), a session long enough to hold
// through a follower, and the holder confined to its follower when the
// servers are partitioned.
func TestFollowerServingLongHolderLosesBeforeRival(t *testing.T) {
	c, f, rest := followerEnsemble(t, zktest.WithTickTime(200*time.Millisecond),
		zktest.WithSessionTimeouts(400*time.Millisecond, 8*time.Second))
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	holderS := newSession(t, []string{c.Server(f).Addr()}, zklock.WithSessionTimeout(6*time.Second))
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))

	rivalS := newSession(t, rest, zklock.WithSessionTimeout(6*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() { require.NoError(t, c.Isolate(f)) })
	t.Logf("loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}

// TestFollowerPartitionHolderFreeToMove: the holder may reconnect to any
// server; its follower is cut from the others. It either keeps its session
// (it reconnects to the majority in time) and no rival holds, or its loss
// signal fires before a rival holds.
func TestFollowerPartitionHolderFreeToMove(t *testing.T) {
	c, f, rest := followerEnsemble(t, zktest.WithTickTime(200*time.Millisecond),
		zktest.WithSessionTimeouts(400*time.Millisecond, 8*time.Second))
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	holderS := sessionOnServer(t, c, f, zklock.WithSessionTimeout(6*time.Second))
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	lost := m.Lost()

	rivalS := newSession(t, rest, zklock.WithSessionTimeout(6*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	got := make(chan time.Time, 1)
	rivalCtx, stopRival := context.WithCancel(ctx)
	defer stopRival()
	go func() {
		if rival.Lock(rivalCtx) == nil {
			got <- time.Now()
		}
	}()
	require.NoError(t, c.Isolate(f))
	// Long enough for the follower to give up (3s) and for the leader to
	// expire the session had the holder not moved (6s after its last touch).
	window := time.NewTimer(12 * time.Second)
	defer window.Stop()
	var lostAt time.Time
	for lostAt.IsZero() {
		select {
		case <-lost:
			lostAt = time.Now()
		case at := <-got:
			t.Fatalf("rival held at %v while the holder believed it held", at.Format(time.StampMicro))
		case <-window.C:
			t.Logf("the holder kept its session through the partition; no rival held")
			stopRival()
			require.NoError(t, c.HealNetwork())
			require.NoError(t, m.Unlock(ctx))
			return
		}
	}
	select {
	case rivalAt := <-got:
		require.True(t, rivalAt.After(lostAt))
		t.Logf("loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))
		require.NoError(t, rival.Unlock(ctx))
	case <-ctx.Done():
		t.Fatal("the rival never held after the holder's loss")
	}
}

// sessionOnServer opens sessions on every server of c until one is
// connected to server i (by the server's own list of connections), closing
// the others; it gives up after 20 tries.
func sessionOnServer(t *testing.T, c *zktest.Cluster, i int, opts ...zklock.SessionOption) *zklock.Session {
	t.Helper()
	ctx := ctxFor(t)
	for range 20 {
		s, err := zklock.NewSession(ctx, append([]zklock.SessionOption{zklock.WithServers(c.Servers()...)}, opts...)...)
		require.NoError(t, err)
		cons, err := c.FourLetter(ctx, i, "cons")
		require.NoError(t, err)
		if strings.Contains(cons, fmt.Sprintf("sid=0x%x", s.SessionID())) {
			t.Cleanup(func() { s.Close() })
			return s
		}
		s.Close()
	}
	t.Fatalf("no session landed on server %d in 20 tries", i)
	return nil
}
