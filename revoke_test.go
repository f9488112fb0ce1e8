package zklock_test

import (
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// A revocable holder learns of a revocation request through Revoked; the
// waiter behind it, though its handle announces releases, never takes the
// request's write for a release (a revocable node does not announce), and
// holds only once the holder lets go.
func TestRevokeHolder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "revoke")
	m, err := zklock.NewMutex(newSession(t, c.Servers()), path, zklock.WithRevocable(func() {}))
	require.NoError(t, err)
	require.Nil(t, zklock.RevokedOf(m), "nothing held: no revocation can come")
	require.NoError(t, m.Lock(ctx))
	revoked := zklock.RevokedOf(m)
	require.NotNil(t, revoked)
	ws := newSession(t, c.Servers())
	w, err := zklock.NewMutex(ws, path)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() { got <- w.Lock(ctx) }()
	watching := func() bool {
		all, err := c.Watches(ctx)
		require.NoError(t, err)
		return slices.Contains(all[ws.Client().SessionID()], zklock.NodeOf(m))
	}
	eventually(t, 10*time.Second, "the waiter watches the holder", watching)

	sent := time.Now()
	nodes, err := zklock.Revoke(ctx, newSession(t, c.Servers()), path)
	require.NoError(t, err)
	require.Equal(t, []string{zklock.NodeOf(m)}, nodes)
	select {
	case <-revoked:
		t.Logf("revocation request to the holder's signal: %v", time.Since(sent))
	case <-ctx.Done():
		t.Fatal("the holder was not told of the revocation request")
	}
	eventually(t, 10*time.Second, "the waiter watches the holder again", watching)
	select {
	case err := <-got:
		t.Fatalf("the waiter's Lock returned (%v) while the revoked holder holds", err)
	default:
	}
	cs, err := zklock.ContendersOf(ctx, w)
	require.NoError(t, err)
	require.Equal(t, zklock.RevokeMessage, string(cs[0].Data), "the holder's node carries the request")
	require.NoError(t, m.Unlock(ctx))
	require.NoError(t, <-got)
	require.NoError(t, w.Unlock(ctx))
}

// Revoke refuses a holder that is not revocable (its node announces
// releases, so a write would fool the waiter behind it), an empty path,
// and a bad path; it revokes every reader holding an RWMutex, and a
// waiter named by its node.
func TestRevokeTargets(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	root := lockPath(t, "revoke")

	plain, err := zklock.NewMutex(s, root+"/plain")
	require.NoError(t, err)
	require.NoError(t, plain.Lock(ctx))
	_, err = zklock.Revoke(ctx, s, root+"/plain")
	require.ErrorIs(t, err, zklock.ErrNotRevocable)
	cs, err := zklock.ContendersOf(ctx, plain)
	require.NoError(t, err)
	require.NotEqual(t, zklock.RevokeMessage, string(cs[0].Data), "nothing written to a refused holder")
	require.NoError(t, plain.Unlock(ctx))

	_, err = zklock.Revoke(ctx, s, root+"/none")
	require.ErrorIs(t, err, zklock.ErrNotLocked)
	_, err = zklock.Revoke(ctx, s, "no/slash")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)

	var readers []*zklock.RWMutex
	for range 2 {
		r, err := zklock.NewRWMutex(newSession(t, c.Servers()), root+"/rw", zklock.WithRevocable(func() {}))
		require.NoError(t, err)
		require.NoError(t, r.RLock(ctx))
		readers = append(readers, r)
	}
	wr, err := zklock.NewRWMutex(newSession(t, c.Servers()), root+"/rw", zklock.WithRevocable(func() {}))
	require.NoError(t, err)
	wgot := make(chan error, 1)
	go func() { wgot <- wr.Lock(ctx) }()
	eventually(t, 10*time.Second, "the writer queues", func() bool {
		cs, err := zklock.ContendersOf(ctx, readers[0])
		require.NoError(t, err)
		return len(cs) == 3
	})
	nodes, err := zklock.Revoke(ctx, s, root+"/rw")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{zklock.NodeOf(readers[0]), zklock.NodeOf(readers[1])}, nodes)
	for _, r := range readers {
		select {
		case <-zklock.RevokedOf(r):
		case <-ctx.Done():
			t.Fatal("a reader was not told")
		}
		require.NoError(t, r.RUnlock(ctx))
	}
	require.NoError(t, <-wgot)
	require.NoError(t, wr.Unlock(ctx))
}

// Only a client allowed to write the holder's node can revoke it.
func TestRevokeNeedsPermission(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "revoke")
	owner := newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("owner:secret")), zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	m, err := zklock.NewMutex(owner, path, zklock.WithRevocable(func() {}))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	stranger := newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("stranger:other")), zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	_, err = zklock.Revoke(ctx, stranger, path)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	select {
	case <-zklock.RevokedOf(m):
		t.Fatal("revoked by a client without permission")
	default:
	}
	nodes, err := zklock.Revoke(ctx, newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("owner:secret")), zklock.WithACL(zk.AuthACL(zk.PermAll)...)), path)
	require.NoError(t, err)
	require.Len(t, nodes, 1)
	<-zklock.RevokedOf(m)
	require.NoError(t, m.Unlock(ctx))
}

// A request sent the moment Lock returns, from the holder's own session,
// reaches the holder, round after round. (The race behind it, a request
// written between the watcher's read and its watch, is pinned
// deterministically by TestRevocationBetweenReadAndWatch.)
func TestRevokeRightAfterLock(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, "right-after")
	m, err := zklock.NewMutex(s, path, zklock.WithRevocable(func() {}))
	require.NoError(t, err)
	for i := range 20 {
		require.NoError(t, m.Lock(ctx))
		_, err := zklock.Revoke(ctx, s, path)
		require.NoError(t, err)
		select {
		case <-zklock.RevokedOf(m):
		case <-time.After(10 * time.Second):
			t.Fatalf("round %d: Revoked not closed 10s after the request", i)
		}
		require.NoError(t, m.Unlock(ctx))
	}
}

// WithMaxHold: the holder's Lost fires at the bound, before a rival holds;
// Unlock then returns ErrLockLost, and nothing is left behind. Released in
// time, the hold is not lost.
func TestMaxHold(t *testing.T) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "maxhold")
	s := newSession(t, c.Servers())
	m, err := zklock.NewMutex(s, path, zklock.WithMaxHold(300*time.Millisecond))
	require.NoError(t, err)

	require.NoError(t, m.Lock(ctx))
	require.NoError(t, m.Unlock(ctx), "released within the bound")

	// The bound counts from the grant, which comes after asked and before
	// Lock returns: measured from the return, the loss came 299.79ms after
	// it at load 30 (make test), on time.
	asked := time.Now()
	require.NoError(t, m.Lock(ctx))
	granted, lost := time.Now(), m.Lost()
	rival, err := zklock.NewMutex(newSession(t, c.Servers()), path)
	require.NoError(t, err)
	lostAt, rivalAt := lossBeforeRival(ctx, t, lost, rival, nil)
	require.GreaterOrEqual(t, lostAt.Sub(asked), 300*time.Millisecond)
	t.Logf("loss %v after the grant, rival %v after the loss", lostAt.Sub(granted), rivalAt.Sub(lostAt))
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrLockLost)
	require.NoError(t, rival.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), path, false)

	_, err = zklock.NewMutex(s, path, zklock.WithMaxHold(0))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewElection(s, path, zklock.WithMaxHold(time.Second))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewMutex(s, path, zklock.WithCohort(0, 0), zklock.WithRevocable(func() {}))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
}

// Break: refused without force while the holder's node (so its session)
// lives, naming the holder; with force the node goes and the next
// contender holds, and the old holder's guard fails while its token is
// below the new one's. A client that may not delete cannot break.
func TestBreak(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "break")
	owner := newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("owner:secret")), zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	m, err := zklock.NewMutex(owner, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	w, err := zklock.NewMutex(newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("owner:secret")), zklock.WithACL(zk.AuthACL(zk.PermAll)...)), path)
	require.NoError(t, err)
	got := make(chan error, 1)
	go func() { got <- w.Lock(ctx) }()

	op := newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("owner:secret")), zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	_, err = zklock.Break(ctx, op, path, false)
	var alive *zklock.LockedError
	require.ErrorAs(t, err, &alive)
	require.ErrorIs(t, err, zklock.ErrHolderAlive)
	require.Len(t, alive.Holders, 1)
	require.Equal(t, zklock.NodeOf(m), alive.Holders[0].Path)
	require.Equal(t, path+"/"+alive.Holder, alive.Holders[0].Path)
	require.Equal(t, owner.Client().SessionID(), alive.Holders[0].Session)
	require.Equal(t, owner.Client().SessionID(), alive.Session)
	require.Equal(t, m.Token(), alive.Holders[0].Token)

	stranger := newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("stranger:other")), zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	_, err = zklock.Break(ctx, stranger, path, true)
	require.ErrorIs(t, err, zk.ErrNoAuth)

	guard := m.Guard()
	broken, err := zklock.Break(ctx, op, path, true)
	require.NoError(t, err)
	require.Len(t, broken, 1)
	require.Equal(t, zklock.NodeOf(m), broken[0].Path)
	require.NoError(t, <-got, "the next contender holds")
	require.Greater(t, w.Token(), m.Token())
	_, err = owner.Client().Multi(ctx, guard, &zk.SetDataOp{Path: path, Data: []byte("stale"), Version: -1})
	require.ErrorIs(t, err, zk.ErrNoNode, "the broken holder's guard")
	require.NoError(t, w.Unlock(ctx))
	_, err = zklock.Break(ctx, op, path, true)
	require.ErrorIs(t, err, zklock.ErrNotLocked)
}

// WithRevocable's listener is called once per revocation request, each
// request a write of its own (Curator's RevocationListener hears each one),
// while the holder holds; after the release it hears nothing. A nil
// listener is refused.
func TestRevokeListener(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	s := newSession(t, c.Servers())
	_, err := zklock.NewMutex(s, path, zklock.WithRevocable(nil))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)

	heard := make(chan struct{}, 8)
	m, err := zklock.NewMutex(s, path, zklock.WithRevocable(func() { heard <- struct{}{} }))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	op := newSession(t, c.Servers())
	for i := 1; i <= 2; i++ {
		nodes, err := zklock.Revoke(ctx, op, path)
		require.NoError(t, err)
		require.Equal(t, []string{zklock.NodeOf(m)}, nodes)
		select {
		case <-heard:
		case <-time.After(10 * time.Second):
			t.Fatalf("request %d not heard within 10s", i)
		}
	}
	require.NoError(t, m.Unlock(ctx))
	select {
	case <-heard:
		t.Fatal("the listener heard more than the two requests")
	default:
	}
}
