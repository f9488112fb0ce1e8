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
	c := standalone(t)
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
		return nodeOf(pa.Guard()) != "" && watches(t, c, ms.SessionID(), nodeOf(h.Guard()))
	})
	old := ms.SessionID()
	require.NoError(t, zktest.ExpireSession(ctx, c, p, old))
	eventually(t, 20*time.Second, "the MultiLock waits for /b under its new session", func() bool {
		return ms.SessionID() != old && watches(t, c, ms.SessionID(), nodeOf(h.Guard()))
	})
	r, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	require.NoError(t, r.Lock(ctx), "the rival holds /a: the MultiLock's node there went with its session")
	require.NoError(t, h.Unlock(ctx))
	if err, returned := returnsOr(t, "the MultiLock returns or waits for the rival on /a", mlgot, func() bool {
		return watches(t, c, ms.SessionID(), nodeOf(r.Guard()))
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
		require.Equal(t, ms.SessionID(), st.EphemeralOwner)
	}
	require.NoError(t, ml.Unlock(ctx))
	requireNoEphemerals(t, c, ms.SessionID(), root, false)
}
