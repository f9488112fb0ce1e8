package zklock_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// nodesUnder lists path's children as the server sees them (none if missing).
func nodesUnder(t *testing.T, s *zklock.Session, path string) []string {
	t.Helper()
	kids, _, err := s.Client().Children(t.Context(), path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	require.NoError(t, err)
	return kids
}

func seqOf(t *testing.T, node string) string {
	t.Helper()
	i := strings.LastIndex(node, "lock-")
	require.Positive(t, i, node)
	return node[i+len("lock-"):]
}

func TestMutexExcludesAndIsFIFO(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	const workers, cycles = 20, 50
	var holders atomic.Int32
	var mu sync.Mutex
	var order []string // nodes in acquisition order
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		s := newSession(t, c.Servers())
		m, err := zklock.NewMutex(s, path)
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < cycles; i++ {
				if err := m.Lock(ctx); err != nil {
					t.Error(err)
					return
				}
				if n := holders.Add(1); n != 1 {
					t.Errorf("%d holders at once", n)
				}
				mu.Lock()
				order = append(order, nodeOf(m.Guard()))
				mu.Unlock()
				holders.Add(-1)
				if err := m.Unlock(ctx); err != nil {
					t.Error(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	require.Len(t, order, workers*cycles)
	// Sequence numbers are read here, not by the workers: seqOf fails the
	// test, which only the test goroutine may do.
	for i := 1; i < len(order); i++ {
		require.Less(t, seqOf(t, order[i-1]), seqOf(t, order[i]), "acquisition %d out of enqueue order", i)
	}
	obs := newSession(t, c.Servers())
	require.Empty(t, nodesUnder(t, obs, path), "nodes left behind")
}

func TestMutexLeavesNothingOnCancelTimeoutAndTry(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	s := newSession(t, c.Servers())
	holder, _ := zklock.NewMutex(s, path)
	require.NoError(t, holder.Lock(ctx))

	other := newSession(t, c.Servers())
	m, _ := zklock.NewMutex(other, path)
	holderOnly := []string{nodeOf(holder.Guard())}
	// Each ctx ends only once the waiter's node is on the server, so what
	// is checked is the cleanup of a queued node, not an early return. 5s:
	// at load 30 in make test the node was not seen within a 1s deadline
	// ("not within 10s: the waiter's node on the server").
	tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	res := async(func() error { return m.Lock(tctx) })
	awaitEphemeralOf(t, s.Client(), path, other.SessionID())
	require.NoError(t, tctx.Err(), "the waiter's node appeared only after its deadline")
	require.ErrorIs(t, await(t, res, 10*time.Second, "timed-out Lock").err, context.DeadlineExceeded)
	require.Equal(t, holderOnly, ephemeralsUnder(t, s.Client(), path), "timed-out waiter left its node")

	cctx, cancel2 := context.WithCancel(ctx)
	res = async(func() error { return m.Lock(cctx) })
	awaitEphemeralOf(t, s.Client(), path, other.SessionID())
	cancel2()
	require.ErrorIs(t, await(t, res, 10*time.Second, "cancelled Lock").err, context.Canceled)
	require.Equal(t, holderOnly, ephemeralsUnder(t, s.Client(), path), "cancelled waiter left its node")

	err := m.TryLock(ctx)
	require.ErrorIs(t, err, zklock.ErrLocked)
	var le *zklock.LockedError
	require.ErrorAs(t, err, &le)
	require.Equal(t, s.SessionID(), le.Session)
	require.Contains(t, nodeOf(holder.Guard()), le.Holder)
	require.Len(t, nodesUnder(t, s, path), 1, "failed TryLock left its node")

	// An error after the create: the session closes while we wait.
	done := make(chan error, 1)
	go func() { done <- m.Lock(ctx) }()
	eventually(t, 5*time.Second, "waiter queued", func() bool { return len(nodesUnder(t, s, path)) == 2 })
	require.NoError(t, other.Close())
	require.ErrorIs(t, <-done, zklock.ErrSessionClosed)
	require.Len(t, nodesUnder(t, s, path), 1, "waiter of a closed session left its node")
	require.NoError(t, holder.Unlock(ctx))
	require.Empty(t, nodesUnder(t, s, path))
}

func TestMutexRejectsBadInput(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	for _, tc := range []struct {
		path string
		opts []zklock.Option
		want error
	}{
		{"", nil, zklock.ErrInvalidArgument},
		{"relative/path", nil, zklock.ErrInvalidArgument},
		{"/trailing/", nil, zklock.ErrInvalidArgument},
		{"/double//slash", nil, zklock.ErrInvalidArgument},
		{"/dot/./x", nil, zklock.ErrInvalidArgument},
		{"/zookeeper/quota", nil, zklock.ErrInvalidArgument},
		{"/zookeeper", nil, zklock.ErrInvalidArgument},
		{"/bad\x00char", nil, zklock.ErrInvalidArgument},
		{"/bad\u0007char", nil, zklock.ErrInvalidArgument},
		{"/ok", []zklock.Option{zklock.WithData(make([]byte, zk.MaxDataSize+1))}, zklock.ErrInvalidArgument},
		{"/ok", []zklock.Option{nil}, zklock.ErrInvalidArgument},
	} {
		t.Run(tc.path, func(t *testing.T) {
			m, err := zklock.NewMutex(s, tc.path, tc.opts...)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, m)
		})
	}
	_, err := zklock.NewMutex(nil, "/ok")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewReentrantMutex(nil, "/ok")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)

	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(s, path)
	require.NoError(t, err)
	//lint:ignore SA1012 a nil ctx is the input under test
	require.ErrorIs(t, m.Lock(nil), zklock.ErrInvalidArgument) //nolint:staticcheck
	done, cancel := context.WithCancel(ctx)
	cancel()
	require.ErrorIs(t, m.Lock(done), context.Canceled)
	require.ErrorIs(t, m.TryLock(done), context.Canceled)
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrNotLocked)
	_, ok, err := s.Client().Exists(ctx, strings.TrimSuffix(lockPath(t, ""), "/"))
	require.NoError(t, err)
	require.False(t, ok, "nothing may be created on the server")

	require.NoError(t, m.Lock(ctx))
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, m.Lock(short), context.DeadlineExceeded, "Lock on a held Mutex waits, as sync.Mutex's")
	require.ErrorIs(t, m.TryLock(ctx), zklock.ErrLocked, "TryLock on a held Mutex fails, as sync.Mutex's")
	require.NoError(t, m.Unlock(ctx))
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrNotLocked, "double Unlock")
}

func TestReentrantMutex(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	s := newSession(t, c.Servers())
	a, err := zklock.NewReentrantMutex(s, path)
	require.NoError(t, err)
	b, err := zklock.NewReentrantMutex(s, path)
	require.NoError(t, err)

	require.NoError(t, a.Lock(ctx))
	require.NoError(t, a.Lock(ctx))
	require.NoError(t, a.TryLock(ctx))
	require.Equal(t, 3, a.HoldCount())
	require.Len(t, nodesUnder(t, s, path), 1, "nested acquisitions make one node")

	require.ErrorIs(t, b.TryLock(ctx), zklock.ErrLocked, "a second owner is excluded")
	require.ErrorIs(t, b.Unlock(ctx), zklock.ErrNotOwner)
	bctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Lock(bctx), context.DeadlineExceeded, "a second owner blocks")

	require.NoError(t, a.Unlock(ctx))
	require.NoError(t, a.Unlock(ctx))
	require.ErrorIs(t, b.TryLock(ctx), zklock.ErrLocked, "still held at count 1")
	require.NoError(t, a.Unlock(ctx))
	require.ErrorIs(t, a.Unlock(ctx), zklock.ErrNotLocked, "more unlocks than locks")
	require.NoError(t, b.Lock(ctx))
	require.NoError(t, b.Unlock(ctx))
	require.Empty(t, nodesUnder(t, s, path))
}
