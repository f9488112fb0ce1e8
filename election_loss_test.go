package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

func TestElectionTermLostBeforeExpiry(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs())
	e := newElection(t, s, path)
	term, err := e.Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	tctx, cancel := term.Context(ctx)
	defer cancel()

	rival := newElection(t, newSession(t, c.Servers()), path)
	next := campaignAsync(ctx, rival, "b")
	p.Blackhole()
	var lostAt time.Time
	select {
	case <-term.Lost():
		lostAt = time.Now()
	case r := <-next:
		t.Fatalf("rival elected before the leader's term ended: %v", r.err)
	case <-time.After(3 * s.Timeout()):
		t.Fatal("term did not end")
	}
	<-tctx.Done()
	require.ErrorIs(t, context.Cause(tctx), zklock.ErrLeadershipLost)
	require.ErrorIs(t, term.Err(), zklock.ErrLeadershipLost)
	r := <-next
	require.NoError(t, r.err)
	require.True(t, time.Now().After(lostAt))
	require.Greater(t, r.t.Token(), term.Token())
	p.Heal()
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrLeadershipLost)
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrNotLeader)
}

func TestElectionNodeDeletedEndsTerm(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	e := newElection(t, newSession(t, c.Servers()), path)
	term, err := e.Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	next := campaignAsync(ctx, newElection(t, newSession(t, c.Servers()), path), "b")

	// An operator deletes the leader's node while its session lives.
	require.NoError(t, newSession(t, c.Servers()).Conn().Delete(term.Node(), -1))
	select {
	case <-term.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the term outlived its node")
	}
	require.ErrorIs(t, term.Err(), zklock.ErrLeadershipLost)
	r := <-next
	require.NoError(t, r.err)
	require.Greater(t, r.t.Token(), term.Token())
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrLeadershipLost)
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrNotLeader)
}

// A candidate whose session expires while it waits must not be told it
// leads on the strength of its old node (etcd#19597): it campaigns again
// under the new session and leads with a node of that session.
func TestElectionCandidateExpiredWhileWaiting(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	leader := newElection(t, newSession(t, c.Servers()), path)
	first, err := leader.Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs())
	old := s.SessionID()
	pending := campaignAsync(ctx, newElection(t, s, path), "b")
	watcher := newSession(t, c.Servers())
	eventually(t, 10*time.Second, "b queued", func() bool { return len(children(t, watcher, path)) == 2 })

	require.NoError(t, zktest.ExpireSession(ctx, c, p, old))
	eventually(t, 20*time.Second, "b re-queued under a new session", func() bool {
		return s.SessionID() != old && len(children(t, watcher, path)) == 2
	})
	require.NoError(t, leader.Resign(ctx))
	r := <-pending
	require.NoError(t, r.err)
	require.Equal(t, s.SessionID(), r.t.SessionID())
	require.NotEqual(t, old, r.t.SessionID())
	require.Greater(t, r.t.Token(), first.Token())
	require.Nil(t, r.t.Err())
	require.Len(t, children(t, watcher, path), 1)
}
