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
	t.Parallel()
	c := shared(t)
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
	case <-time.After(3 * s.Timing().Timeout):
		t.Fatal("term did not end")
	}
	<-tctx.Done()
	require.ErrorIs(t, context.Cause(tctx), zklock.ErrLockLost)
	require.ErrorIs(t, term.Err(), zklock.ErrLockLost)
	r := <-next
	require.NoError(t, r.err)
	require.True(t, time.Now().After(lostAt))
	require.Greater(t, r.t.Token(), term.Token())
	p.Heal()
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrLockLost)
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrNotLocked)
}

func TestElectionNodeDeletedEndsTerm(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	e := newElection(t, newSession(t, c.Servers()), path)
	term, err := e.Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	next := campaignAsync(ctx, newElection(t, newSession(t, c.Servers()), path), "b")

	// An operator deletes the leader's node while its session lives.
	require.NoError(t, newSession(t, c.Servers()).Client().Delete(ctx, nodeOf(term.Guard()), -1))
	select {
	case <-term.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the term outlived its node")
	}
	require.ErrorIs(t, term.Err(), zklock.ErrLockLost)
	r := <-next
	require.NoError(t, r.err)
	require.Greater(t, r.t.Token(), term.Token())
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrLockLost)
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrNotLocked)
}
