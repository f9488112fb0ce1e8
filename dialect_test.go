package zklock_test

import (
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// heldThing is the dialect every hold speaks: the loss signal, the fencing
// token and the guard for zk.Client.Multi, under the same names
// everywhere. A hold of one node guards with one check (oneNode), a hold
// of several (a Lease, a MultiLock) with one check per node (nodes).
type heldThing interface {
	Lost() <-chan struct{}
	Token() int64
}

type oneNode interface {
	heldThing
	Guard() *zk.CheckOp
}

type nodes interface {
	heldThing
	Guard() []zk.Op
}

var (
	_ = []oneNode{(*zklock.Mutex)(nil), (*zklock.ReentrantMutex)(nil), (*zklock.RWMutex)(nil), (*zklock.Term)(nil)}
	_ = []nodes{(*zklock.Lease)(nil)}
)

// guardOf is h's guard as one check per node.
func guardOf(h heldThing) []zk.Op {
	switch h := h.(type) {
	case oneNode:
		if g := h.Guard(); g != nil {
			return []zk.Op{g}
		}
	case nodes:
		g := h.Guard()
		for _, op := range g {
			if c, ok := op.(*zk.CheckOp); !ok || c != nil {
				return g
			}
		}
		return nil // nothing held: only nil checks, which Multi refuses
	}
	return nil
}

// requireHeld checks a hold's accessors against the server: our node exists
// with the token as its czxid, the guard checks that node, and the loss
// signal is open.
func requireHeld(t *testing.T, s *zklock.Session, h heldThing) {
	t.Helper()
	node := zklock.NodeOf(h)
	require.NotEmpty(t, node)
	st, ok, err := s.Client().Exists(t.Context(), node)
	require.NoError(t, err)
	require.True(t, ok, "the node exists")
	require.Equal(t, st.Czxid<<12, h.Token(), "the token is the node's czxid << 12")
	g := guardOf(h)
	require.NotEmpty(t, g)
	require.Equal(t, &zk.CheckOp{Path: node, Version: -1}, g[len(g)-1], "the last check is the node behind Token")
	select {
	case <-h.Lost():
		t.Fatal("Lost is closed while held")
	default:
	}
}

// requireReleased checks the accessors of a hold that holds nothing.
func requireReleased(t *testing.T, h heldThing) {
	t.Helper()
	require.Empty(t, zklock.NodeOf(h))
	require.Zero(t, h.Token())
	require.Nil(t, guardOf(h))
	select {
	case <-h.Lost():
	default:
		t.Fatal("Lost is open with nothing held")
	}
}

// TestOneDialect: every hold exposes the same accessors, with the same
// meaning, held and released.
func TestOneDialect(t *testing.T) {
	t.Parallel()
	c := shared(t)
	s := newSession(t, c.Servers())
	ctx := ctxFor(t)
	type acq struct {
		h       heldThing
		acquire func() error
		release func() error
	}
	m, err := zklock.NewMutex(s, lockPath(t, "m"))
	require.NoError(t, err)
	r, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
	require.NoError(t, err)
	rw, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
	require.NoError(t, err)
	rr, err := zklock.NewRWMutex(s, lockPath(t, "rr"))
	require.NoError(t, err)
	sem, err := zklock.NewSemaphore(s, lockPath(t, "sem"), 3)
	require.NoError(t, err)
	var lease *zklock.Lease
	cases := map[string]acq{
		"Mutex":          {m, func() error { return m.Lock(ctx) }, func() error { return m.Unlock(ctx) }},
		"ReentrantMutex": {r, func() error { return r.Lock(ctx) }, func() error { return r.Unlock(ctx) }},
		"RWMutex write":  {rw, func() error { return rw.Lock(ctx) }, func() error { return rw.Unlock(ctx) }},
		"RWMutex read":   {rr, func() error { return rr.RLock(ctx) }, func() error { return rr.RUnlock(ctx) }},
	}
	for name, a := range cases {
		t.Run(name, func(t *testing.T) {
			requireReleased(t, a.h)
			require.NoError(t, a.acquire())
			requireHeld(t, s, a.h)
			require.NoError(t, a.release())
			requireReleased(t, a.h)
		})
	}
	t.Run("Lease", func(t *testing.T) {
		lease, err = sem.Acquire(ctx, 2)
		require.NoError(t, err)
		requireHeld(t, s, lease)
		require.Equal(t, zklock.LeaseNodes(lease)[1], zklock.NodeOf(lease), "the guard's last check is the node behind Token")
		require.Equal(t, []zk.Op{&zk.CheckOp{Path: zklock.LeaseNodes(lease)[0], Version: -1}, &zk.CheckOp{Path: zklock.LeaseNodes(lease)[1], Version: -1}}, lease.Guard(), "one check per lease")
		require.NoError(t, lease.Release(ctx))
		requireReleased(t, lease)
	})
}

// TestLockers: every exclusive hold has a sync.Locker adapter (and the
// RWMutex a read one), which locks and unlocks through the server.
func TestLockers(t *testing.T) {
	t.Parallel()
	c := shared(t)
	s := newSession(t, c.Servers())
	m, err := zklock.NewMutex(s, lockPath(t, "m"))
	require.NoError(t, err)
	r, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
	require.NoError(t, err)
	rw, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
	require.NoError(t, err)
	for name, tc := range map[string]struct {
		l    sync.Locker
		node func() string
	}{
		"Mutex":           {locker{m.Lock, m.Unlock}, func() string { return zklock.NodeOf(m) }},
		"ReentrantMutex":  {locker{r.Lock, r.Unlock}, func() string { return zklock.NodeOf(r) }},
		"RWMutex write":   {locker{rw.Lock, rw.Unlock}, func() string { return zklock.NodeOf(rw) }},
		"RWMutex RLocker": {locker{rw.RLock, rw.RUnlock}, func() string { return zklock.NodeOf(rw) }},
	} {
		t.Run(name, func(t *testing.T) {
			tc.l.Lock()
			require.NotEmpty(t, tc.node(), "held through the Locker")
			tc.l.Unlock()
			require.Empty(t, tc.node(), "released through the Locker")
		})
	}
	rl := locker{r.Lock, r.Unlock}
	rl.Lock()
	rl.Lock()
	require.Equal(t, 2, zklock.HoldCount(r), "the reentrant Locker counts")
	rl.Unlock()
	rl.Unlock()
	require.Zero(t, zklock.HoldCount(r))
	require.Panics(t, func() { rl.Unlock() }, "Unlock without Lock panics")
}
