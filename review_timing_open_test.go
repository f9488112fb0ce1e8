//go:build review

package zklock_test

import (
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// TestReviewBreak_BalancedConfFromAnotherServer: the holder's one address
// is a balancer (a Kubernetes client Service, a DNS name with a record per
// server) in front of the ensemble; each new TCP connection may go to any
// server. The 'conf' that zklock asks "of the server" just before a connect
// goes on a connection of its own, so it may be answered by server a (which
// grants up to 20s) while the connect goes to server x (restarted to grant
// at most 1.2s). x's connect response is lost: the leader re-arms the
// session with 1.2s, while the holder caps its deadline with a's 20s.
func TestReviewBreak_BalancedConfFromAnotherServer(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithSyncLimit(5), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	a, x := (leader+1)%3, (leader+2)%3
	require.NoError(t, c.Server(x).Restart(zktest.WithSessionTimeouts(200*time.Millisecond, 1200*time.Millisecond)))
	require.NoError(t, c.WaitReady(ctx))

	p := zktest.NewProxy(t, []string{c.Server(a).Addr(), c.Server(x).Addr()})
	var mu sync.Mutex
	toX := false
	lb := newSniffBalancer(t, func(first []byte) string {
		mu.Lock()
		defer mu.Unlock()
		if isFourLetter(first) {
			return c.Server(a).Addr() // every four-letter word lands on a
		}
		if toX {
			return p.Addrs()[1]
		}
		return p.Addrs()[0]
	})
	holderS := newSession(t, []string{lb.addr()}, zklock.WithSessionTimeout(10*time.Second))
	t.Logf("holder's timing: %+v", holderS.Client().Timing())
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(holderS, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rivalS := newSession(t, []string{c.Server(leader).Addr()}, zklock.WithSessionTimeout(10*time.Second))
	rival, err := zklock.NewMutex(rivalS, path)
	require.NoError(t, err)
	cutAt := time.Now()
	lostAt, rivalAt := lossBeforeRival(ctx, t, m.Lost(), rival, func() {
		mu.Lock()
		toX = true
		mu.Unlock()
		p.DropConnectReply()
		cutAt = time.Now()
		p.Reset() // the holder reconnects through the balancer: conf from a, connect to x
	})
	t.Logf("loss signal %v after the cut led the rival's acquisition by %v", lostAt.Sub(cutAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}

// TestReviewBreak_BalancedConfSyncLimitFromAnotherServer: a rolling restart
// is under way behind a balanced address: follower f runs with syncLimit 50
// (it serves 5s without its leader), the others still with 5. Every
// four-letter word through the balancer lands on another server, so the
// holder learns syncLimit 5 and holds through f; f is then isolated. No
// reply is lost: the holder's deadline just rests on another server's conf.
func TestReviewBreak_BalancedConfSyncLimitFromAnotherServer(t *testing.T) {
	c, f, rest := followerEnsemble(t, zktest.WithSyncLimit(5), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.Server(f).Restart(zktest.WithSyncLimit(50)))
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	require.NotEqual(t, f, leader)
	lb := newSniffBalancer(t, func(first []byte) string {
		if isFourLetter(first) {
			return c.Server(leader).Addr()
		}
		return c.Server(f).Addr()
	})
	holderS := newSession(t, []string{lb.addr()}, zklock.WithSessionTimeout(8*time.Second))
	t.Logf("holder's timing: %+v", holderS.Client().Timing())
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

// TestReviewBreak_ConfUnansweredAfterRestartLowerMax: server x told 'conf'
// (up to 20s) at NewSession; it is restarted to grant at most 1.2s, and from
// then on its 'conf' is not answered (the connection hangs) while its client
// port serves. The holder's reconnect to x loses its response. zklock takes
// a server that does not answer at what it last told (docs/ownership.md,
// "Reasoned"), which is the one thing a restart changes.
func TestReviewBreak_ConfUnansweredAfterRestartLowerMax(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithSyncLimit(5), zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx := ctxFor(t)
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	a, x := (leader+1)%3, (leader+2)%3
	p := zktest.NewProxy(t, []string{c.Server(a).Addr(), c.Server(x).Addr()})
	p.Only(0)
	silent := silentListener(t)
	var mu sync.Mutex
	hang := false
	lbA := newSniffBalancer(t, func(first []byte) string {
		if isFourLetter(first) {
			return c.Server(a).Addr()
		}
		return p.Addrs()[0]
	})
	lbX := newSniffBalancer(t, func(first []byte) string {
		mu.Lock()
		defer mu.Unlock()
		if isFourLetter(first) {
			if hang {
				return silent
			}
			return c.Server(x).Addr()
		}
		return p.Addrs()[1]
	})
	holderS := newSession(t, []string{lbA.addr(), lbX.addr()}, zklock.WithSessionTimeout(10*time.Second))
	t.Logf("holder's timing: %+v", holderS.Client().Timing())
	mu.Lock()
	hang = true
	mu.Unlock()
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
		p.Only(1) // the holder's connection to a is reset; it reconnects to x alone
	})
	t.Logf("loss signal %v after the cut led the rival's acquisition by %v", lostAt.Sub(cutAt), rivalAt.Sub(lostAt))
	require.NoError(t, rival.Unlock(ctx))
}
