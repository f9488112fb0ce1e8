package zklock_test

import (
	"bytes"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// Adversarial review (r44) of the timing zklock learns from the servers'
// 'conf': where the answer comes from, and what a statement overrides.

// isFourLetter reports whether a connection's first bytes are a four-letter
// word (lower-case ASCII), not a ZooKeeper frame.
func isFourLetter(first []byte) bool {
	return bytes.IndexFunc(first, func(r rune) bool { return r < 'a' || r > 'z' }) < 0
}

// TestReview_StatedTimingBelowConf: the servers answer 'conf' (tick 100ms,
// syncLimit 50: a follower serves 5s without its leader) but the user
// states syncLimit 5. The statement must not lower what the servers told:
// a holder on a follower that is then isolated loses before the rival.
func TestReview_StatedTimingBelowConf(t *testing.T) {
	c, f, rest := followerEnsemble(t, zktest.WithSyncLimit(50), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	holderS := newSession(t, []string{c.Server(f).Addr()}, zklock.WithSessionTimeout(8*time.Second),
		zklock.WithEnsembleTiming(100*time.Millisecond, 5))
	require.Equal(t, zklock.Timing{Tick: 100 * time.Millisecond, SyncLimit: 50, Source: "conf"}, holderS.Timing(),
		"what the servers told, not the lower statement")
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rivalS := newSession(t, rest, zklock.WithSessionTimeout(8*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	cutAt := time.Now()
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
		cutAt = time.Now()
		require.NoError(t, c.Isolate(f))
	})
	t.Logf("loss signal %v after the cut led the rival's acquisition by %v", lostAt.Sub(cutAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}

// silentListener accepts connections on 127.0.0.1 and never answers them
// (a server whose four-letter-word thread is stuck), until cleanup.
func silentListener(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, nc)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		for _, nc := range conns {
			nc.Close()
		}
		mu.Unlock()
	})
	return ln.Addr().String()
}

// TestReview_ConfRefusedEveryReconnectEndsHold: an ensemble that refuses
// 'conf' (timing stated); the holder's connection is reset five times in a
// row. Each reconnect must end the hold (Lost closes, Unlock says
// ErrLockLost) and the holder gets the lock back each time; a waiter of
// the same session, queued behind the holder across a reset, is granted
// once the holder lets go; after all that, a rival still comes only after
// the holder's loss signal.
func TestReview_ConfRefusedEveryReconnectEndsHold(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithFourLetterWords("srvr"), zktest.WithSyncLimit(5),
		zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	p := zktest.NewProxy(t, c.Servers())
	holderS := newSession(t, p.Addrs(), zklock.WithSessionTimeout(4*time.Second),
		zklock.WithEnsembleTiming(100*time.Millisecond, 5))
	require.Equal(t, "stated", holderS.Timing().Source)
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	for i := range 5 {
		require.NoError(t, m.Lock(ctx), "round %d", i)
		lost := m.Lost()
		resetAt := time.Now()
		p.Reset()
		select {
		case <-lost:
			t.Logf("round %d: hold ended %v after the reset", i, time.Since(resetAt))
		case <-time.After(2 * time.Second):
			t.Fatalf("round %d: the reconnect did not end the hold", i)
		}
		require.ErrorIs(t, m.Unlock(ctx), zklock.ErrLockLost, "round %d", i)
	}
	w, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	wGot := make(chan error, 1)
	go func() { wGot <- w.Lock(ctx) }()
	time.Sleep(300 * time.Millisecond) // the waiter queues
	lost := m.Lost()
	p.Reset()
	select {
	case <-lost:
	case <-time.After(2 * time.Second):
		t.Fatal("the reconnect with a waiter queued did not end the hold")
	}
	select {
	case err := <-wGot:
		t.Fatalf("the waiter returned %v while the holder's node was kept", err)
	default:
	}
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrLockLost)
	unlockAt := time.Now()
	select {
	case err := <-wGot:
		require.NoError(t, err, "the waiter requeued and got the lock")
		t.Logf("waiter granted %v after the holder's Unlock", time.Since(unlockAt))
	case <-time.After(15 * time.Second):
		t.Fatal("the waiter never got the lock")
	}
	require.NoError(t, w.Unlock(ctx))
	// A rival on the same servers gets the lock once the holder lets go,
	// and the holder's Lost never stays open while the rival holds.
	require.NoError(t, m.Lock(ctx))
	rivalS := newSession(t, c.Servers(), zklock.WithSessionTimeout(4*time.Second), zklock.WithEnsembleTiming(100*time.Millisecond, 5))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() { p.Blackhole() })
	t.Logf("after 5 reconnects, loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
	p.Heal()
}

// TestReview_FourLetterWordsHangNewSession: an ensemble member whose
// four-letter words hang (accepted, never answered) while its client port
// serves. NewSession must not hang past its bounds nor guess a timing: it
// must refuse (the servers told nothing) or rest on a told timing.
func TestReview_FourLetterWordsHangNewSession(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithSyncLimit(50), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	silent := silentListener(t)
	lb := newSniffBalancer(t, func(first []byte) string {
		if isFourLetter(first) {
			return silent
		}
		return c.Server(0).Addr()
	})
	start := time.Now()
	s, err := zklock.NewSession(ctx, zklock.WithServers(lb.addr()), zklock.WithSessionTimeout(8*time.Second))
	took := time.Since(start)
	t.Logf("NewSession took %v: err %v", took, err)
	require.Less(t, took, 30*time.Second)
	if err == nil {
		defer s.Close()
		t.Logf("timing: %+v", s.Timing())
		require.NotEqual(t, "standalone", s.Timing().Source, "an ensemble member taken for standalone")
		require.GreaterOrEqual(t, s.Timing().SyncLimit, 50, "a guessed timing")
		return
	}
	require.ErrorIs(t, err, zklock.ErrTimingUnknown)
	require.Contains(t, err.Error(), lb.addr(), "the refusal names the server that did not answer")
}

// TestReview_ServerDownAtNewSessionLowerMax: server x is down when the
// holder's session begins (it tells nothing, and is taken to be like the
// servers that told: up to 20s), then comes up granting at most 1.2s. The
// holder's reconnect to x loses its response. zklock asks x its 'conf'
// just before the connect, so it must cap the deadline at x's 1.2s.
func TestReview_ServerDownAtNewSessionLowerMax(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithSyncLimit(5), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	a, x := (leader+1)%3, (leader+2)%3
	require.NoError(t, c.Server(x).Stop())
	p := zktest.NewProxy(t, []string{c.Server(a).Addr(), c.Server(x).Addr()})
	p.Only(0)
	holderS := newSession(t, p.Addrs(), zklock.WithSessionTimeout(10*time.Second))
	t.Logf("holder's timing: %+v", holderS.Timing())
	require.NoError(t, c.Server(x).Restart(zktest.WithSessionTimeouts(200*time.Millisecond, 1200*time.Millisecond)))
	require.NoError(t, c.WaitReady(ctx))
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rivalS := newSession(t, []string{c.Server(leader).Addr()}, zklock.WithSessionTimeout(10*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	cutAt := time.Now()
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
		p.DropConnectReply()
		cutAt = time.Now()
		p.Only(1)
	})
	t.Logf("loss signal %v after the cut led the rival's acquisition by %v", lostAt.Sub(cutAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}

// truncatingConf listens on 127.0.0.1 and answers each connection with
// server's answer to the four-letter word the client sent, cut (a clean
// close, as a proxy does when the server's side was reset mid-answer) just
// before the line beginning with cutBefore.
func truncatingConf(t *testing.T, server, cutBefore string) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			wg.Add(1)
			go func() {
				defer wg.Done()
				defer nc.Close()
				_ = nc.SetDeadline(time.Now().Add(5 * time.Second))
				cmd := make([]byte, 4)
				if _, err := io.ReadFull(nc, cmd); err != nil {
					return
				}
				sc, err := net.DialTimeout("tcp", server, 2*time.Second)
				if err != nil {
					return
				}
				defer sc.Close()
				_ = sc.SetDeadline(time.Now().Add(5 * time.Second))
				if _, err := sc.Write(cmd); err != nil {
					return
				}
				out, _ := io.ReadAll(sc)
				if i := bytes.Index(out, []byte("\n"+cutBefore)); i >= 0 {
					out = out[:i+1]
				}
				_, _ = nc.Write(out)
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		wg.Wait()
	})
	return ln.Addr().String()
}

// TestReviewBreak_TruncatedConfMakesFollowerStandalone: the holder reaches
// follower f through a proxy that closes each 'conf' answer cleanly after
// its session-bound lines and before "initLimit=" (as a proxy does when
// the server's side is reset mid-answer; the session asks only at
// NewSession and its connect here, so those answers are the ones cut). f's 'srvr' says follower, yet the cut answer, which
// has tickTime and both bounds but no syncLimit, is taken as a standalone
// server's whole conf. f is then isolated from its peers (it serves 3s).
// (Fix, f44: a conf shaped like a standalone server's is believed only when
// 'srvr' says standalone; a member's cut answer tells nothing, so the
// session is refused without a stated timing, and with one it holds on the
// stated timing.)
func TestReviewBreak_TruncatedConfMakesFollowerStandalone(t *testing.T) {
	c, f, rest := followerEnsemble(t, zktest.WithSyncLimit(30), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	cut := truncatingConf(t, c.Server(f).Addr(), "initLimit=")
	lb := newSniffBalancer(t, func(first []byte) string {
		if string(first) == "conf" {
			return cut
		}
		return c.Server(f).Addr()
	})
	_, err := zklock.NewSession(ctx, zklock.WithServers(lb.addr()), zklock.WithSessionTimeout(6*time.Second))
	require.ErrorIs(t, err, zklock.ErrTimingUnknown, "a follower's cut conf taken for an answer")
	holderS := newSession(t, []string{lb.addr()}, zklock.WithSessionTimeout(6*time.Second),
		zklock.WithEnsembleTiming(100*time.Millisecond, 30))
	t.Logf("holder's timing: %+v", holderS.Timing())
	require.Equal(t, zklock.Timing{Tick: 100 * time.Millisecond, SyncLimit: 30, Source: "stated"}, holderS.Timing())
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rivalS := newSession(t, rest, zklock.WithSessionTimeout(6*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	cutAt := time.Now()
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
		cutAt = time.Now()
		require.NoError(t, c.Isolate(f))
		// The holder works: it reads every 100ms, as a holder using the
		// session for its own requests does.
		go func() {
			for range 80 {
				_, _, err := holderS.Client().Exists(ctx, "/")
				if err != nil || ctx.Err() != nil || closed(m.Lost()) {
					t.Logf("%v after the cut: read %v", time.Since(cutAt), err)
					return
				}
				time.Sleep(100 * time.Millisecond)
			}
		}()
	})
	t.Logf("loss signal %v after the cut led the rival's acquisition by %v", lostAt.Sub(cutAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}

// TestReview_MinSessionRaisedAboveTimeout: server x is restarted to grant
// at least 15s, above the holder's 10s; the holder's reconnect to x loses
// its response (x re-arms the session with 15s, longer). The holder must
// still lose before the rival, and its timeout must not grow past what it
// asked for the sake of a grant it never saw.
func TestReview_MinSessionRaisedAboveTimeout(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithSyncLimit(5), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	a, x := (leader+1)%3, (leader+2)%3
	p := zktest.NewProxy(t, []string{c.Server(a).Addr(), c.Server(x).Addr()})
	p.Only(0)
	holderS := newSession(t, p.Addrs(), zklock.WithSessionTimeout(10*time.Second))
	require.NoError(t, c.Server(x).Restart(zktest.WithSessionTimeouts(15*time.Second, 30*time.Second)))
	require.NoError(t, c.WaitReady(ctx))
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rivalS := newSession(t, []string{c.Server(leader).Addr()}, zklock.WithSessionTimeout(10*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	cutAt := time.Now()
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
		p.DropConnectReply()
		cutAt = time.Now()
		p.Only(1)
	})
	t.Logf("loss signal %v after the cut led the rival's acquisition by %v", lostAt.Sub(cutAt), rivalAt.Sub(lostAt))
	require.Less(t, lostAt.Sub(cutAt), 10*time.Second)
	require.NoError(t, rival.Unlock(ctx))
}

// TestReviewBreak_TruncatedConfHidesRollingRestart: as
// TestRollingRestartRaisesSyncLimit (follower g restarted with syncLimit
// 50 under a live 12s session on a 200ms tick, then the holder reaches only
// g, which is isolated), but g's 'conf' answer reaches the holder cut
// cleanly before "initLimit=", so it has no syncLimit line: zklock takes g
// for a standalone server and never learns the 10s g serves alone.
func TestReviewBreak_TruncatedConfHidesRollingRestart(t *testing.T) {
	c, f, _ := followerEnsemble(t, zktest.WithTickTime(200*time.Millisecond), zktest.WithSyncLimit(10),
		zktest.WithSessionTimeouts(400*time.Millisecond, 30*time.Second))
	ctx := ctxFor(t)
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	g := 3 - f - leader
	p := zktest.NewProxy(t, []string{c.Server(f).Addr(), c.Server(g).Addr()})
	p.Only(0)
	var mu sync.Mutex
	cutG := false
	cut := truncatingConf(t, c.Server(g).Addr(), "initLimit=")
	lbF := newSniffBalancer(t, func(first []byte) string {
		if isFourLetter(first) {
			return c.Server(f).Addr()
		}
		return p.Addrs()[0]
	})
	lbG := newSniffBalancer(t, func(first []byte) string {
		mu.Lock()
		defer mu.Unlock()
		if string(first) == "conf" && cutG {
			return cut
		}
		if isFourLetter(first) {
			return c.Server(g).Addr()
		}
		return p.Addrs()[1]
	})
	holderS := newSession(t, []string{lbF.addr(), lbG.addr()}, zklock.WithSessionTimeout(12*time.Second))
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
	mu.Lock()
	cutG = true
	mu.Unlock()
	cutAt := time.Now()
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
		p.Only(1)
		eventually(t, 10*time.Second, "the holder reconnects", func() bool {
			return holderS.State() == zk.StateReconnected || holderS.State() == zk.StateLost
		})
		t.Logf("holder's timing after the reconnect: %+v", holderS.Timing())
		cutAt = time.Now()
		require.NoError(t, c.Isolate(g))
	})
	t.Logf("loss signal %v after the isolation led the rival's acquisition by %v", lostAt.Sub(cutAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}
