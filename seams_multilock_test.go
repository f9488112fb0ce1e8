package zklock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// Finding 3: a MultiLock whose first part is lost (session expiry) while it
// waits for the second does not return success while a rival holds the
// first: it starts over, and holds every part, live, in the end.
func TestMultiLockPartLostWhileAcquiringZK(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "multi")
	p := zktest.NewProxy(t, c.Servers())
	ms := newSession(t, p.Addrs())
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	pb, err := zklock.NewMutex(ms, root+"/b")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, pb)
	require.NoError(t, err)
	h, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/b")
	require.NoError(t, err)
	require.NoError(t, h.Lock(ctx))
	mlgot := make(chan error, 1)
	go func() { mlgot <- ml.Lock(ctx) }()
	eventually(t, 10*time.Second, "the MultiLock holds /a and waits for /b", func() bool {
		return zklock.NodeOf(pa) != "" && watches(t, c, ms.Client().SessionID(), zklock.NodeOf(h))
	})
	old := ms.Client().SessionID()
	require.NoError(t, c.ExpireSession(ctx, p, old))
	eventually(t, 20*time.Second, "the MultiLock waits for /b under its new session", func() bool {
		return ms.Client().SessionID() != old && watches(t, c, ms.Client().SessionID(), zklock.NodeOf(h))
	})
	r, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	require.NoError(t, r.Lock(ctx), "the rival holds /a: the MultiLock's node there went with its session")
	require.NoError(t, h.Unlock(ctx))
	if err, returned := returnsOr(t, "the MultiLock returns or waits for the rival on /a", mlgot, func() bool {
		return watches(t, c, ms.Client().SessionID(), zklock.NodeOf(r))
	}); returned {
		t.Fatalf("MultiLock.Lock returned %v while the rival holds /a (the /a part's Lost closed: %v, the MultiLock's: %v)",
			err, closed(pa.Lost()), closed(ml.Lost()))
	}
	require.NoError(t, r.Unlock(ctx))
	require.NoError(t, <-mlgot)
	require.False(t, closed(ml.Lost()), "MultiLock.Lock returned a lost hold")
	for _, g := range ml.Guard() {
		n := g.(*zk.CheckOp).Path
		_, st, err := ms.Client().Get(ctx, n)
		require.NoError(t, err)
		require.Equal(t, ms.Client().SessionID(), st.EphemeralOwner)
	}
	require.NoError(t, ml.Unlock(ctx))
	requireNoEphemerals(t, c, ms.Client().SessionID(), root, false)
}

// A MultiLock whose first part's node is deleted by another client (Break
// with force) while it waits for the second does not return success while
// a rival holds the first: a Break fires no loss signal, so the parts that
// waited are looked at on the server before Lock returns; it starts over,
// and holds every part, live, in the end. Found by FuzzSharedHandles on
// the in-memory server (s0.multilock#1 (MultiLock.Lock) has Lost open, but
// its node(s) [/ml/a/...] are gone).
func TestMultiLockPartBrokenWhileAcquiringZK(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "multi")
	ms := newSession(t, c.Servers())
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	pb, err := zklock.NewMutex(ms, root+"/b")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, pb)
	require.NoError(t, err)
	hs := newSession(t, c.Servers())
	h, err := zklock.NewMutex(hs, root+"/b")
	require.NoError(t, err)
	require.NoError(t, h.Lock(ctx))
	mlgot := make(chan error, 1)
	go func() { mlgot <- ml.Lock(ctx) }()
	eventually(t, 10*time.Second, "the MultiLock holds /a and waits for /b", func() bool {
		return zklock.NodeOf(pa) != "" && watches(t, c, ms.Client().SessionID(), zklock.NodeOf(h))
	})
	broken, err := zklock.Break(ctx, hs, root+"/a", true)
	require.NoError(t, err)
	require.Len(t, broken, 1, "Break deleted the MultiLock's node on /a")
	rs := newSession(t, c.Servers())
	r, err := zklock.NewMutex(rs, root+"/a")
	require.NoError(t, err)
	require.NoError(t, r.Lock(ctx), "the rival holds /a: the MultiLock's node there was broken")
	require.NoError(t, h.Unlock(ctx))
	if err, returned := returnsOr(t, "the MultiLock returns or waits for the rival on /a", mlgot, func() bool {
		return watches(t, c, ms.Client().SessionID(), zklock.NodeOf(r))
	}); returned {
		t.Fatalf("MultiLock.Lock returned %v while the rival holds /a (the /a part's Lost closed: %v, the MultiLock's: %v)",
			err, closed(pa.Lost()), closed(ml.Lost()))
	}
	require.NoError(t, r.Unlock(ctx))
	require.NoError(t, <-mlgot)
	require.False(t, closed(ml.Lost()), "MultiLock.Lock returned a lost hold")
	for _, g := range ml.Guard() {
		n := g.(*zk.CheckOp).Path
		_, st, err := ms.Client().Get(ctx, n)
		require.NoError(t, err, "the MultiLock's node %s", n)
		require.Equal(t, ms.Client().SessionID(), st.EphemeralOwner)
	}
	require.NoError(t, ml.Unlock(ctx))
	requireNoEphemerals(t, c, ms.Client().SessionID(), root, false)
}
