package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

func TestMutexHolderCutOffLosesBeforeRival(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	m, _ := zklock.NewMutex(s, path)
	require.NoError(t, m.Lock(ctx))
	lost := m.Lost()

	rivalS := newSession(t, c.Servers())
	rival, _ := zklock.NewMutex(rivalS, path)
	lostAt, rivalAt := lossBeforeRival(ctx, t, lost, rival, p.Blackhole)
	t.Logf("loss signal led the rival's acquisition by %v", rivalAt.Sub(lostAt))

	// A guarded write by the stale holder is rejected.
	p.Heal()
	guard := m.Guard()
	require.NotNil(t, guard)
	_, err := s.Client().Multi(ctx, guard, &zk.SetDataOp{Path: path, Data: []byte("stale"), Version: -1})
	require.Error(t, err, "guarded write by a holder that lost its lock")
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrLockLost)
	require.NoError(t, rival.Unlock(ctx))
	require.NoError(t, m.Lock(ctx), "the handle locks again after loss")
	require.NoError(t, m.Unlock(ctx))
}

func TestMutexKeptThroughEnsembleLeaderKill(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Second))
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	s := newSession(t, c.Servers(), zklock.WithSessionTimeout(8*time.Second))
	m, _ := zklock.NewMutex(s, path)
	require.NoError(t, m.Lock(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Server(leader).Kill())
	other := newSession(t, c.Servers(), zklock.WithSessionTimeout(8*time.Second))
	rival, _ := zklock.NewMutex(other, path)
	require.ErrorIs(t, rival.TryLock(ctx), zklock.ErrLocked, "the lock survives a leader kill")
	select {
	case <-m.Lost():
		t.Fatal("loss signal fired although the session survived")
	default:
	}
	require.NoError(t, m.Unlock(ctx))
	require.NoError(t, rival.TryLock(ctx))
	require.NoError(t, rival.Unlock(ctx))
}

func TestMutexUnlockConvergesThroughOutage(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	obs := newSession(t, c.Servers())
	m, _ := zklock.NewMutex(s, path)
	require.NoError(t, m.Lock(ctx))
	node := nodeOf(m.Guard())

	// The connection is cut and ctx ends first: the lock is still ours.
	p.Blackhole()
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, m.Unlock(short), context.DeadlineExceeded)
	require.Equal(t, node, nodeOf(m.Guard()), "a failed Unlock keeps its state")

	// Still cut; healed while this Unlock retries: it converges.
	go func() { time.Sleep(500 * time.Millisecond); p.Heal() }()
	require.NoError(t, m.Unlock(ctx))
	require.Empty(t, nodeOf(m.Guard()))
	_, ok, err := obs.Client().Exists(ctx, node)
	require.NoError(t, err)
	require.False(t, ok, "the node is deleted")
}
