package zklock_test

import (
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// The tests in this file change what the servers would tell of their
// timing (the four-letter words they answer, their syncLimit, their
// session timeout bounds), before a session begins or under a live one.
// The ownership deadline rests on that timing: zklock must learn it, or be
// told it, or refuse; and learn it again at every connect.

// text returns what was logged so far.
func (b *syncBuffer) text() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// TestConfRefusedTimingUnknown: servers that refuse 'conf' (a stock
// ZooKeeper's whitelist, srvr alone) and whose followers serve 5s without
// their leader (tick 100ms, syncLimit 50). Without WithEnsembleTiming,
// NewSession refuses by name, with both fixes; with it, the session runs
// on the stated timing, says so once at WARN and in Timing, and a holder on
// a follower that is then isolated loses before a rival holds.
func TestConfRefusedTimingUnknown(t *testing.T) {
	c, f, rest := followerEnsemble(t, zktest.WithFourLetterWords("srvr"), zktest.WithSyncLimit(50),
		zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	_, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...), zklock.WithSessionTimeout(8*time.Second))
	require.ErrorIs(t, err, zklock.ErrTimingUnknown)
	for _, want := range []string{"4lw.commands.whitelist=srvr,conf", "WithEnsembleTiming", "maxSessionTimeout"} {
		require.Contains(t, err.Error(), want)
	}
	t.Log(err)

	var logs syncBuffer
	logger := slog.New(slog.NewTextHandler(&logs, nil))
	holderS := newSession(t, []string{c.Server(f).Addr()}, zklock.WithSessionTimeout(8*time.Second),
		zklock.WithEnsembleTiming(100*time.Millisecond, 50), zklock.WithLogger(logger))
	require.Equal(t, zklock.Timing{Tick: 100 * time.Millisecond, SyncLimit: 50, Source: "stated"}, holderS.Timing())
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	require.Equal(t, 1, strings.Count(logs.text(), "level=WARN msg=\"zklock: ensemble timing rests on WithEnsembleTiming"), logs.text())

	rivalS := newSession(t, rest, zklock.WithSessionTimeout(8*time.Second), zklock.WithEnsembleTiming(100*time.Millisecond, 50))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() { require.NoError(t, c.Isolate(f)) })
	t.Logf("loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
	require.Equal(t, 1, strings.Count(logs.text(), "zklock: ensemble timing rests on WithEnsembleTiming"), "logged once")
}

// TestLostConnectReplyLowerMaxSession: one server is restarted, under a
// live session, to grant at most 1.2s; the holder (a 10s session) then
// reconnects to it alone and loses the connect's response, and reaches no
// server after. The leader re-arms the session with the 1.2s that server
// granted, so the holder must lose before the rival holds, whether that
// server tells its bounds ('conf' allowed) or not ('conf' refused, the
// timing stated).
func TestLostConnectReplyLowerMaxSession(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithSyncLimit(5), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	a, x := (leader+1)%3, (leader+2)%3
	for _, tc := range []struct {
		name  string
		words string
		opts  []zklock.SessionOption
	}{
		// Each restarts x with the bounds lowered, after the holder's
		// NewSession saw it grant 20s (first) or refuse 'conf' (second).
		{"conf refused, timing stated", "srvr", []zklock.SessionOption{zklock.WithEnsembleTiming(100*time.Millisecond, 5)}},
		{"conf allowed", "*", []zklock.SessionOption{zklock.WithEnsembleTiming(100*time.Millisecond, 5)}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := zktest.NewProxy(t, []string{c.Server(a).Addr(), c.Server(x).Addr()})
			p.Only(0)
			holderS := newSession(t, p.Addrs(), append([]zklock.SessionOption{zklock.WithSessionTimeout(10 * time.Second)}, tc.opts...)...)
			require.NoError(t, c.Server(x).Restart(zktest.WithSessionTimeouts(200*time.Millisecond, 1200*time.Millisecond),
				zktest.WithFourLetterWords(tc.words)))
			require.NoError(t, c.WaitReady(ctx))
			path := lockPath(t, "lock")
			m, err := zklock.NewMutex(holderS, path)
			require.NoError(t, err)
			require.NoError(t, m.Lock(ctx))
			rivalS := newSession(t, []string{c.Server(leader).Addr()}, zklock.WithSessionTimeout(10*time.Second))
			rival, err := zklock.NewMutex(rivalS, path)
			require.NoError(t, err)
			lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
				p.DropConnectReply()
				p.Only(1) // the holder's connection to a is reset; it reconnects to x alone
			})
			t.Logf("loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))
			require.NoError(t, rival.Unlock(ctx))
		})
	}
}

// TestRollingRestartRaisesSyncLimit: a rolling restart raises syncLimit
// from 10 to 50 (tick 200ms: a follower then serves 10s without its
// leader) under a live 12s session, which that leaves no time to hold
// through a follower. The holder is on one follower while the other is
// restarted, then reaches only the restarted one, which is isolated. The
// holder's epoch ends, with the numbers in the log, before the rival holds.
func TestRollingRestartRaisesSyncLimit(t *testing.T) {
	c, f, _ := followerEnsemble(t, zktest.WithTickTime(200*time.Millisecond), zktest.WithSyncLimit(10),
		zktest.WithSessionTimeouts(400*time.Millisecond, 30*time.Second))
	ctx := ctxFor(t)
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	g := 3 - f - leader // the other follower
	p := zktest.NewProxy(t, []string{c.Server(f).Addr(), c.Server(g).Addr()})
	p.Only(0)
	var logs syncBuffer
	holderS := newSession(t, p.Addrs(), zklock.WithSessionTimeout(12*time.Second),
		zklock.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.Equal(t, zklock.Timing{Tick: 200 * time.Millisecond, SyncLimit: 10, Source: "conf"}, holderS.Timing())
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rivalS := newSession(t, []string{c.Server(leader).Addr()}, zklock.WithSessionTimeout(15*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)

	require.NoError(t, c.Server(g).Restart(zktest.WithSyncLimit(50)))
	require.NoError(t, c.WaitReady(ctx))
	// The follower, isolated, serves the holder 10s; the leader expires the
	// session 12s after the last touch that reached it.
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
		p.Only(1)
		eventually(t, 10*time.Second, "the holder reconnects", func() bool { return holderS.State() == zk.StateReconnected || holderS.State() == zk.StateLost })
		require.NoError(t, c.Isolate(g))
	})
	t.Logf("loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
	require.Contains(t, logs.text(), "syncLimit×tickTime = 50×200ms = 10s")
	require.Equal(t, zklock.Timing{Tick: 200 * time.Millisecond, SyncLimit: 50, Source: "conf"}, holderS.Timing())
}

// TestConfRefusedReconnectEndsHold: a standalone server that refuses
// 'conf' needs no ensemble timing, but its session bounds are unknown, so a
// reconnect (which it may have granted any shorter timeout, had its
// response been lost) ends the hold; the session holds again once the
// response has arrived.
func TestConfRefusedReconnectEndsHold(t *testing.T) {
	c := zktest.Start(t, zktest.WithFourLetterWords("srvr"))
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(4*time.Second))
	require.Equal(t, "standalone", s.Timing().Source)
	m, err := zklock.NewMutex(s, lockPath(t, "lock"))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	lost := m.Lost()
	p.Reset()
	select {
	case <-lost:
	case <-time.After(2 * time.Second): // well before the deadline the old connection's replies set
		t.Fatal("the reconnect did not end the hold")
	}
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrLockLost)
	require.NoError(t, m.Lock(ctx), "a new epoch once the reconnect's response arrived")
	require.NoError(t, m.Unlock(ctx))
}
