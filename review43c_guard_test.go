package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Open finding of the issue-43 review (attack class "a caller that ignores
// an error and commits"): MultiLock.Guard returns nil when nothing is held,
// and the documented composition, s.Client().Multi(ctx, append(ml.Guard(),
// writes...)...), then sends the writes alone: they commit while a rival
// holds the lock. A Mutex's Guard of nothing held is a nil *zk.CheckOp,
// which Multi refuses with ErrInvalidArgument and sends nothing.
// Lease.Guard after Release is the same (nil slice).
//
// Before the fix (dda9ba7) it failed with:
//
//	a write guarded by ml.Guard() of a MultiLock whose Lock failed committed
//	while the rival holds /a (Guard returned [] ops)
func TestReviewBreak_MLGuardOfNothingHeldCommits(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, pz)
	require.NoError(t, err)
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	require.NoError(t, rv.Lock(ctx))
	data := root + "/data" // the resource; its parent exists now
	_, err = ms.Client().Create(ctx, data, nil, zk.ModePersistent)
	require.NoError(t, err)
	lctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, ml.Lock(lctx), context.DeadlineExceeded, "the rival holds /a")

	// The single-node guard refuses: nothing is sent.
	_, err = ms.Client().Multi(ctx, pa.Guard(), &zk.SetDataOp{Path: data, Data: []byte("mutex"), Version: -1})
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)

	g := ml.Guard()
	_, err = ms.Client().Multi(ctx, append(g, &zk.SetDataOp{Path: data, Data: []byte("stale"), Version: -1})...)
	require.Error(t, err, "a write guarded by ml.Guard() of a MultiLock whose Lock failed committed while the rival holds /a (Guard returned %v ops)", g)
	require.NoError(t, rv.Unlock(ctx))
}

// The same for a Semaphore's Lease (documented: Guard "returns nil once
// released"): a goroutine that still guards its writes with the lease's
// Guard after the lease was released commits while a rival holds the one
// lease.
//
// Before the fix (dda9ba7) it failed with:
//
//	a write guarded by the released lease's Guard committed while the rival
//	holds the lease (Guard returned [] ops)
func TestReviewBreak_MLLeaseGuardAfterReleaseCommits(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	sem, err := zklock.NewSemaphore(ms, root+"/s", 1)
	require.NoError(t, err)
	l, err := sem.Acquire(ctx, 1)
	require.NoError(t, err)
	data := root + "/data"
	_, err = ms.Client().Create(ctx, data, nil, zk.ModePersistent)
	require.NoError(t, err)
	_, err = ms.Client().Multi(ctx, append(l.Guard(), &zk.SetDataOp{Path: data, Data: []byte("held"), Version: -1})...)
	require.NoError(t, err, "guarded by a held lease")
	require.NoError(t, l.Release(ctx))
	rsem, err := zklock.NewSemaphore(newSession(t, c.Servers()), root+"/s", 1)
	require.NoError(t, err)
	rl, err := rsem.Acquire(ctx, 1)
	require.NoError(t, err)
	g := l.Guard()
	_, err = ms.Client().Multi(ctx, append(g, &zk.SetDataOp{Path: data, Data: []byte("stale"), Version: -1})...)
	require.Error(t, err, "a write guarded by the released lease's Guard committed while the rival holds the lease (Guard returned %v ops)", g)
	require.NoError(t, rl.Release(ctx))
}
