package zklock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// multiParts returns, over s, a Mutex on paths[0], an RWMutex's write side
// on paths[1] and a lease of a limit-1 Semaphore on paths[2], given in the
// order of paths.
func multiParts(t *testing.T, s *zklock.Session, paths []string) []zklock.Part {
	t.Helper()
	var parts []zklock.Part
	for _, p := range paths {
		switch p[len(p)-1] {
		case 'm':
			m, err := zklock.NewMutex(s, p)
			require.NoError(t, err)
			parts = append(parts, m)
		case 'w':
			m, err := zklock.NewRWMutex(s, p)
			require.NoError(t, err)
			parts = append(parts, m)
		case 's':
			sem, err := zklock.NewSemaphore(s, p, 1)
			require.NoError(t, err)
			parts = append(parts, sem)
		}
	}
	return parts
}

// Two sessions lock the same three paths, naming them in opposite orders,
// many rounds each: no deadlock (every round finishes within the test's
// bound), and never two holders of one path.
func TestMultiLockOppositeOrders(t *testing.T) {
	t.Parallel()
	c := shared(t)
	root := lockPath(t, "multi")
	paths := []string{root + "/a-m", root + "/b-w", root + "/c-s"}
	reversed := []string{paths[2], paths[1], paths[0]}
	ctx, cancel := context.WithTimeout(ctxFor(t), 2*time.Minute)
	defer cancel()
	var mu sync.Mutex
	holders, overlaps := 0, 0
	const rounds = 25
	errs := make(chan error, 2)
	for i, order := range [][]string{paths, reversed} {
		ml, err := zklock.NewMultiLock(multiParts(t, newSession(t, c.Servers()), order)...)
		require.NoError(t, err)
		go func() {
			for r := range rounds {
				if err := ml.Lock(ctx); err != nil {
					errs <- fmt.Errorf("client %d round %d: %w", i, r, err)
					return
				}
				mu.Lock()
				if holders++; holders > 1 {
					overlaps++
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				holders--
				mu.Unlock()
				if err := ml.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("client %d round %d: Unlock: %w", i, r, err)
					return
				}
			}
			errs <- nil
		}()
	}
	for range 2 {
		require.NoError(t, <-errs)
	}
	require.Zero(t, overlaps)
}

// Cancelled while it waits for its first, middle or last part, Lock
// returns the ctx's error and leaves nothing on the server: the parts it
// held are released, the one it waited for is withdrawn.
func TestMultiLockCancelAtEveryStage(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	for stage := range 3 {
		t.Run(fmt.Sprintf("waiting for part %d", stage), func(t *testing.T) {
			root := lockPath(t, "multi")
			paths := []string{root + "/a-m", root + "/b-w", root + "/c-s"}
			other := newSession(t, c.Servers())
			blocker, err := zklock.NewMultiLock(multiParts(t, other, paths[stage:stage+1])...)
			require.NoError(t, err)
			require.NoError(t, blocker.Lock(ctx))
			s := newSession(t, c.Servers())
			ml, err := zklock.NewMultiLock(multiParts(t, s, paths)...)
			require.NoError(t, err)
			lctx, cancel := context.WithCancel(ctx)
			got := make(chan error, 1)
			go func() { got <- ml.Lock(lctx) }()
			eventually(t, 10*time.Second, "our node queues on the blocked part", func() bool {
				return len(ownedBy(t, s, s.Client().SessionID(), paths[stage], paths[stage]+"/leases", paths[stage]+"/locks")) > 0
			})
			for _, p := range paths[:stage] {
				require.NotEmpty(t, ownedBy(t, s, s.Client().SessionID(), p, p+"/leases"), "part %s held while waiting", p)
			}
			cancel()
			require.ErrorIs(t, <-got, context.Canceled)
			require.Nil(t, ml.Tokens())
			requireNoEphemerals(t, c, s.Client().SessionID(), root, false)
			require.NoError(t, blocker.Unlock(ctx))
			require.NoError(t, ml.Lock(ctx), "the MultiLock locks once the blocker is gone")
			require.NoError(t, ml.Unlock(ctx))
			requireNoEphemerals(t, c, s.Client().SessionID(), root, false)
		})
	}
}

// One part's session is cut off: the MultiLock's Lost fires, and Unlock
// reports the loss while releasing the other parts.
func TestMultiLockLossOfOnePart(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "multi")
	p := zktest.NewProxy(t, c.Servers())
	healthy := newSession(t, c.Servers())
	cut := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	parts := append(multiParts(t, healthy, []string{root + "/a-m"}), multiParts(t, cut, []string{root + "/b-m"})...)
	ml, err := zklock.NewMultiLock(parts...)
	require.NoError(t, err)
	require.NoError(t, ml.Lock(ctx))
	require.Len(t, ml.Tokens(), 2)
	lost := ml.Lost()
	p.Blackhole()
	select {
	case <-lost:
	case <-time.After(20 * time.Second):
		t.Fatal("the MultiLock's loss signal did not fire")
	}
	require.ErrorIs(t, ml.Unlock(ctx), zklock.ErrLockLost)
	requireNoEphemerals(t, c, healthy.Client().SessionID(), root, false)
	requireClosed(t, ml.Lost())
}

// Guard: every part's check, in one multi with the write; stale after
// Unlock. Bad arguments are refused.
func TestMultiLockGuardAndArguments(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "multi")
	s := newSession(t, c.Servers())
	parts := multiParts(t, s, []string{root + "/b-w", root + "/a-m", root + "/c-s"})
	ml, err := zklock.NewMultiLock(parts...)
	require.NoError(t, err)
	require.NoError(t, ml.Lock(ctx))
	require.ErrorIs(t, ml.Lock(ctx), zklock.ErrAlreadyLocked)
	write := func(guard []zk.Op) error {
		_, err := s.Client().Multi(ctx, append(guard, &zk.SetDataOp{Path: root, Data: []byte("x"), Version: -1})...)
		return err
	}
	guard := ml.Guard()
	require.Len(t, guard, 3)
	require.NoError(t, write(guard))
	for i, tok := range ml.Tokens() {
		require.NotEmpty(t, guard[i].(*zk.CheckOp).Path)
		require.Positive(t, tok)
	}
	require.NoError(t, ml.Unlock(ctx))
	require.Error(t, write(guard), "a guard used after Unlock")
	require.ErrorIs(t, ml.Unlock(ctx), zklock.ErrNotLocked)
	requireNoEphemerals(t, c, s.Client().SessionID(), root, false)

	m, err := zklock.NewMutex(s, root+"/x")
	require.NoError(t, err)
	m2, err := zklock.NewMutex(s, root+"/x")
	require.NoError(t, err)
	for name, ps := range map[string][]zklock.Part{
		"none":        nil,
		"nil part":    {nil},
		"nil handle":  {(*zklock.Mutex)(nil)},
		"same path":   {m, m2},
		"same handle": {parts[0], parts[0]},
	} {
		_, err := zklock.NewMultiLock(ps...)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, name)
	}
}
