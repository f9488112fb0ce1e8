package zklock_test

import (
	"context"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// semChecker tracks how many leases are held in this process.
type semChecker struct {
	mu       sync.Mutex
	now, max int
}

func (c *semChecker) enter(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now += n
	c.max = max(c.max, c.now)
}

func (c *semChecker) leave(n int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now -= n
}

func newSem(t *testing.T, s *zklock.Session, path string, limit int) *zklock.Semaphore {
	t.Helper()
	sem, err := zklock.NewSemaphore(s, path, limit)
	require.NoError(t, err)
	return sem
}

// acquireAsync runs Acquire on a goroutine.
func acquireAsync(ctx context.Context, sem *zklock.Semaphore, n int) (<-chan result, *(*zklock.Lease)) {
	var l *zklock.Lease
	return async(func() error {
		var err error
		l, err = sem.Acquire(ctx, n)
		return err
	}), &l
}

func TestSemaphoreBasics(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 2)
	path := lockPath(t, "sem")
	a, b := newSem(t, ss[0], path, 2), newSem(t, ss[1], path, 2)
	l1, err := a.Acquire(ctx, 1)
	require.NoError(t, err)
	l2, err := b.TryAcquire(ctx, 1)
	require.NoError(t, err)
	require.Greater(t, l2.Token(), l1.Token(), "tokens increase")
	require.Len(t, zklock.LeaseNodes(l1), 1)
	require.Contains(t, zklock.LeaseNodes(l1)[0], path+"/leases/_c_")
	require.Contains(t, zklock.LeaseNodes(l1)[0], "-lease-")
	require.NotNil(t, l1.Guard())
	data, _, err := ss[0].Client().Get(ctx, path)
	require.NoError(t, err)
	require.Equal(t, "2", string(data), "the limit is stored in the path's data")

	_, err = a.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, zklock.ErrLocked)
	hs, err := zklock.HoldersOf(ctx, a)
	require.NoError(t, err)
	require.Len(t, hs, 2, "a failed TryAcquire leaves nothing")

	require.NoError(t, l1.Release(ctx))
	require.ErrorIs(t, l1.Release(ctx), zklock.ErrNotLocked)
	require.Zero(t, l1.Token())
	select {
	case <-l1.Lost():
	default:
		t.Fatal("Lost must be closed once released")
	}
	require.NoError(t, l2.Release(ctx))
	require.Empty(t, nodeNames(t, ss[0], path+"/leases"))
}

// semLayouts are the Semaphore's two layouts, for the tests that hold
// for both.
var semLayouts = []struct {
	name string
	opts []zklock.Option
}{
	{"curator layout", nil},
	{"queue layout", []zklock.Option{zklock.WithPermitLayout()}},
}

// semNodes lists every node a Semaphore of either layout keeps under path:
// its permit nodes, or the children of its locks and leases nodes.
func semNodes(t *testing.T, s *zklock.Session, path string) []string {
	t.Helper()
	out := permitNodes(t, s, path)
	for _, dir := range []string{path + "/leases", path + "/locks"} {
		out = append(out, nodeNames(t, s, dir)...)
	}
	return out
}

// Limit k with 16 sessions x 40 cycles, each taking one or two leases at
// random and holding for a random while (so that holds end out of queue
// order): never more than k leases held, and k is reached.
func TestSemaphoreLimitInvariant(t *testing.T) {
	t.Parallel()
	const sessions, cycles, k = 16, 40, 3
	c := shared(t)
	for _, layout := range semLayouts {
		t.Run(layout.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(ctxFor(t), 3*time.Minute)
			defer cancel()
			path := lockPath(t, "sem")
			ss := manySessions(t, c.Servers(), sessions)
			var chk semChecker
			err := runAll(ctx, sessions, func(ctx context.Context, i int) error {
				sem, err := zklock.NewSemaphore(ss[i], path, k, layout.opts...)
				if err != nil {
					return err
				}
				rnd := rand.New(rand.NewPCG(uint64(i), 7))
				for range cycles {
					n := 1 + rnd.IntN(2)
					l, err := sem.Acquire(ctx, n)
					if err != nil {
						return err
					}
					chk.enter(n)
					time.Sleep(time.Duration(rnd.IntN(15)) * time.Millisecond)
					chk.leave(n)
					if err := l.Release(ctx); err != nil {
						return err
					}
				}
				return nil
			})
			require.NoError(t, err)
			t.Logf("%d cycles, at most %d leases together", sessions*cycles, chk.max)
			require.LessOrEqual(t, chk.max, k)
			require.Equal(t, k, chk.max, "the limit was never reached")
			eventually(t, 10*time.Second, "no node left", func() bool {
				return len(semNodes(t, ss[0], path)) == 0
			})
		})
	}
}

// Waiters are served in arrival order, a larger request included: a later
// small one does not overtake it.
func TestSemaphoreFIFO(t *testing.T) {
	t.Parallel()
	const waiters = 5
	c := shared(t)
	for _, layout := range semLayouts {
		t.Run(layout.name, func(t *testing.T) {
			ctx := ctxFor(t)
			path := lockPath(t, "sem")
			ss := manySessions(t, c.Servers(), waiters+1)
			newS := func(s *zklock.Session) *zklock.Semaphore {
				sem, err := zklock.NewSemaphore(s, path, 2, layout.opts...)
				require.NoError(t, err)
				return sem
			}
			holder, err := newS(ss[0]).Acquire(ctx, 2)
			require.NoError(t, err)
			order := make(chan int, waiters)
			for i := range waiters {
				sem := newS(ss[i+1])
				n := 1
				if i == 1 {
					n = 2
				}
				go func() {
					l, err := sem.Acquire(ctx, n)
					if err != nil {
						return
					}
					order <- i
					time.Sleep(20 * time.Millisecond)
					_ = l.Release(ctx)
				}()
				eventually(t, 10*time.Second, "waiter queued", func() bool {
					cs, err := zklock.ContendersOf(ctx, sem)
					return err == nil && len(cs) == i+1
				})
			}
			require.NoError(t, holder.Release(ctx))
			got := make([]int, 0, waiters)
			for range waiters {
				got = append(got, receive(t, order, 10*time.Second))
			}
			// 0 alone (1 of 2; 1 needs both), then 1, then 2 and 3
			// together, then 4.
			require.Equal(t, 0, got[0])
			require.Equal(t, 1, got[1])
			require.ElementsMatch(t, []int{2, 3}, got[2:4])
			require.Equal(t, 4, got[4])
		})
	}
}

// n leases are taken together or not at all.
func TestSemaphoreMultiLeaseAllOrNothing(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 3)
	path := lockPath(t, "sem")
	l1, err := newSem(t, ss[0], path, 3).Acquire(ctx, 1)
	require.NoError(t, err)
	l2, err := newSem(t, ss[1], path, 3).Acquire(ctx, 1)
	require.NoError(t, err)
	res, lb := acquireAsync(ctx, newSem(t, ss[2], path, 3), 2)
	pending(t, res, 500*time.Millisecond, "two leases while only one is free")
	require.NoError(t, l1.Release(ctx))
	require.NoError(t, await(t, res, 10*time.Second, "two leases").err)
	require.Len(t, zklock.LeaseNodes((*lb)), 2)
	require.NoError(t, (*lb).Release(ctx))
	require.NoError(t, l2.Release(ctx))
}

// A cancelled multi-lease Acquire leaves no node, whether it gave up in the
// queue or at the head of it.
func TestSemaphoreCancelLeavesNothing(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 3)
	path := lockPath(t, "sem")
	held, err := newSem(t, ss[0], path, 3).Acquire(ctx, 2)
	require.NoError(t, err)
	headCtx, headCancel := context.WithCancel(ctx)
	defer headCancel()
	headRes, _ := acquireAsync(headCtx, newSem(t, ss[1], path, 3), 3)
	eventually(t, 10*time.Second, "head queued", func() bool {
		return len(nodeNames(t, ss[0], path+"/leases")) == 5
	})
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queued, _ := acquireAsync(qctx, newSem(t, ss[2], path, 3), 2)
	// Cancelled once its place in the internal mutex is on the server.
	awaitEphemeralOf(t, ss[0].Client(), path+"/locks", ss[2].SessionID())
	cancel()
	require.ErrorIs(t, await(t, queued, 10*time.Second, "queued").err, context.Canceled)
	require.Empty(t, ephemeralsOf(t, ss[0].Client(), path, ss[2].SessionID()), "the queued waiter left a node")
	require.Len(t, nodeNames(t, ss[0], path+"/locks"), 1, "only the head's mutex node is left")

	headCancel()
	require.ErrorIs(t, await(t, headRes, 10*time.Second, "head").err, context.Canceled)
	require.Empty(t, ephemeralsOf(t, ss[0].Client(), path, ss[1].SessionID()), "the head left a node")
	require.Len(t, nodeNames(t, ss[0], path+"/leases"), 2, "only the holder's leases are left")
	require.Empty(t, nodeNames(t, ss[0], path+"/locks"))
	require.NoError(t, held.Release(ctx))
}

func TestSemaphoreLimitMismatch(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 2)
	path := lockPath(t, "sem")
	l, err := newSem(t, ss[0], path, 2).Acquire(ctx, 1)
	require.NoError(t, err)
	other := newSem(t, ss[1], path, 3)
	_, err = other.Acquire(ctx, 1)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	require.Contains(t, err.Error(), `"2"`)
	_, err = other.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	require.Len(t, nodeNames(t, ss[0], path+"/leases"), 1, "a mismatch leaves nothing")
	require.NoError(t, l.Release(ctx))
}

func TestSemaphoreBadInput(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, "sem")
	for _, limit := range []int{0, -1} {
		_, err := zklock.NewSemaphore(s, path, limit)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "limit %d", limit)
	}
	_, err := zklock.NewSemaphore(nil, path, 1)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewSemaphore(s, "/a//b", 1)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	sem := newSem(t, s, path, 2)
	done, cancel := context.WithCancel(context.Background())
	cancel()
	for _, tc := range []struct {
		name string
		ctx  context.Context
		n    int
		want error
	}{
		{"zero", ctx, 0, zklock.ErrInvalidArgument},
		{"negative", ctx, -1, zklock.ErrInvalidArgument},
		{"above limit", ctx, 3, zklock.ErrInvalidArgument},
		{"nil ctx", nil, 1, zklock.ErrInvalidArgument},
		{"cancelled ctx", done, 1, context.Canceled},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := sem.Acquire(tc.ctx, tc.n)
			require.ErrorIs(t, err, tc.want)
			_, err = sem.TryAcquire(tc.ctx, tc.n)
			require.ErrorIs(t, err, tc.want)
		})
	}
	_, ok, err := s.Client().Exists(ctx, path)
	require.NoError(t, err)
	require.False(t, ok, "bad input created nodes")

	l, err := sem.Acquire(ctx, 2)
	require.NoError(t, err)
	//lint:ignore SA1012 a nil ctx is what is tested
	require.ErrorIs(t, l.Release(nil), zklock.ErrInvalidArgument)
	require.NoError(t, l.Release(ctx))
	require.ErrorIs(t, l.Release(ctx), zklock.ErrNotLocked)
}
