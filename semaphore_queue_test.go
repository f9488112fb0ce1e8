package zklock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

func newQueueSem(t *testing.T, s *zklock.Session, path string, limit int) *zklock.Semaphore {
	t.Helper()
	sem, err := zklock.NewSemaphore(s, path, limit, zklock.WithPermitLayout())
	require.NoError(t, err)
	return sem
}

// permitNodes lists path's children that are permit nodes.
func permitNodes(t *testing.T, s *zklock.Session, path string) []string {
	t.Helper()
	var out []string
	for _, n := range nodeNames(t, s, path) {
		if strings.Contains(n, "permit-") {
			out = append(out, n)
		}
	}
	return out
}

func TestSemaphoreQueueBasics(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 2)
	path := lockPath(t, "semq")
	a, b := newQueueSem(t, ss[0], path, 2), newQueueSem(t, ss[1], path, 2)
	l1, err := a.Acquire(ctx, 1)
	require.NoError(t, err)
	l2, err := b.TryAcquire(ctx, 1)
	require.NoError(t, err)
	require.Greater(t, l2.Token(), l1.Token(), "tokens increase")
	require.Len(t, zklock.LeaseNodes(l1), 1)
	require.Contains(t, nodeOf(l1.Guard()), path+"/_c_", "one node directly under the path")
	require.Contains(t, nodeOf(l1.Guard()), "-1of2permit-", "the node carries its leases and the limit")
	require.NotNil(t, l1.Guard())
	require.Equal(t, []string{}, append([]string{}, filterNot(nodeNames(t, ss[0], path), "permit-")...),
		"no locks or leases children: not Curator's layout")

	_, err = a.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, zklock.ErrLocked)
	hs, err := zklock.HoldersOf(ctx, a)
	require.NoError(t, err)
	require.Len(t, hs, 2, "a failed TryAcquire leaves nothing")
	require.Equal(t, zklock.KindSemaphorePermit, hs[0].Kind)

	res, _ := acquireAsync(ctx, a, 1)
	eventually(t, 10*time.Second, "waiter queued", func() bool {
		cs, err := zklock.ContendersOf(ctx, a)
		return err == nil && len(cs) == 1
	})
	require.NoError(t, l1.Release(ctx))
	require.ErrorIs(t, l1.Release(ctx), zklock.ErrNotLocked)
	require.Zero(t, l1.Token())
	require.NoError(t, await(t, res, 10*time.Second, "waiter").err)
	select {
	case <-l1.Lost():
	default:
		t.Fatal("Lost must be closed once released")
	}
	require.NoError(t, l2.Release(ctx))
}

func filterNot(names []string, sub string) []string {
	var out []string
	for _, n := range names {
		if !strings.Contains(n, sub) {
			out = append(out, n)
		}
	}
	return out
}

// Holders leave out of queue order, or their sessions end: the waiter that
// then fits is woken at once, though the node it watches is still there.
func TestSemaphoreQueueOutOfOrder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	for _, tc := range []struct {
		name  string
		limit int
		leave int  // which of the limit holders goes first
		close bool // its session ends instead of a release
	}{
		{"limit 2, second releases", 2, 1, false},
		{"limit 2, second's session ends", 2, 1, true},
		{"limit 3, first releases", 3, 0, false},
		{"limit 3, middle releases", 3, 1, false},
		{"limit 3, first's session ends", 3, 0, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := lockPath(t, "semq")
			ss := manySessions(t, c.Servers(), tc.limit+1)
			leases := make([]*zklock.Lease, tc.limit)
			for i := range leases {
				l, err := newQueueSem(t, ss[i], path, tc.limit).Acquire(ctx, 1)
				require.NoError(t, err)
				leases[i] = l
			}
			res, lw := acquireAsync(ctx, newQueueSem(t, ss[tc.limit], path, tc.limit), 1)
			pending(t, res, 300*time.Millisecond, "a waiter while the leases are taken")
			if tc.close {
				ss[tc.leave].Close()
			} else {
				require.NoError(t, leases[tc.leave].Release(ctx))
			}
			require.NoError(t, await(t, res, 10*time.Second, "the waiter, once a lease is free").err)
			for i, l := range leases {
				if i == tc.leave {
					continue
				}
				select {
				case <-l.Lost():
					t.Fatalf("holder %d lost its lease", i)
				default:
				}
				require.NoError(t, l.Release(ctx))
			}
			require.NoError(t, (*lw).Release(ctx))
			require.Empty(t, permitNodes(t, ss[tc.limit], path))
		})
	}
}

// Each node watches one node: with a holder ahead of another holder and
// waiters behind, the server holds one watch per node but the first, and
// no child watch on the path; a release wakes one client, whatever the
// queue behind it.
func TestSemaphoreQueueHerdFree(t *testing.T) {
	t.Parallel()
	const waiters = 6
	// Sessions of a minute ping every 20 s, so that a session's pings
	// (every 667 ms at the usual 2 s) do not pass for a herd when a busy
	// machine stretches the window the server's counters are read over.
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, time.Minute))
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	ss := manySessions(t, c.Servers(), waiters+2, zklock.WithSessionTimeout(time.Minute))
	for _, s := range ss {
		zklock.AssumeWatchModes(s) // tracked, as on ZooKeeper 3.9
	}
	var leases []*zklock.Lease
	for i := range 2 {
		l, err := newQueueSem(t, ss[i], path, 2).Acquire(ctx, 1)
		require.NoError(t, err)
		leases = append(leases, l)
	}
	var results []<-chan result
	for i := range waiters {
		sem := newQueueSem(t, ss[i+2], path, 2)
		res, _ := acquireAsync(ctx, sem, 1)
		results = append(results, res)
		eventually(t, 10*time.Second, "waiter queued", func() bool {
			cs, err := zklock.ContendersOf(ctx, sem)
			return err == nil && len(cs) == i+1
		})
	}
	// Each session watches the path, with one persistent watch (which
	// ZooKeeper 3.8 counts twice: its data and child tables), and no node:
	// it hears of every deletion there, and counts the nodes ahead of its
	// own (the first holder's session keeps its watch for a while too).
	eventually(t, 10*time.Second, "one watch per session", func() bool {
		n, err := c.WatchCount(ctx)
		return err == nil && n == int64(2*(2+waiters))
	})
	n, err := c.WatchCount(ctx)
	require.NoError(t, err)
	require.Equal(t, int64(2*(2+waiters)), n)
	ws, err := c.Watches(ctx)
	require.NoError(t, err)
	for _, s := range ss {
		require.Equal(t, []string{path}, ws[s.SessionID()], "a session's one watch, on the path")
	}
	// The handoff, counted by the server: the release, the second holder's
	// rank (for waiters that read ranks) and the counting mntr itself, 3
	// (the first waiter holds at the deletion, and reads nothing); a herd
	// would add a request per waiter.
	before := packets(t, c)
	require.NoError(t, leases[0].Release(ctx))
	require.NoError(t, await(t, results[0], 10*time.Second, "the first waiter").err)
	got := packets(t, c) - before
	t.Logf("%d requests from the release to the first waiter's grant", got)
	if got >= 4+waiters {
		t.Fatalf("%d requests from the release to the first waiter's grant: a herd (%d waiters)", got, waiters)
	}
	for _, r := range results[1:] {
		pending(t, r, 100*time.Millisecond, "the other waiters")
	}
	require.NoError(t, leases[1].Release(ctx))
}

// A limit that differs from the one the queue's nodes carry is refused at
// once, smaller or larger, while the leases are taken and clients wait.
func TestSemaphoreQueueLimitMismatch(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 3)
	path := lockPath(t, "semq")
	l, err := newQueueSem(t, ss[0], path, 1).Acquire(ctx, 1)
	require.NoError(t, err)
	res, _ := acquireAsync(ctx, newQueueSem(t, ss[1], path, 1), 1)
	pending(t, res, 200*time.Millisecond, "a waiter")
	for _, limit := range []int{2, 3} {
		other := newQueueSem(t, ss[2], path, limit)
		kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		_, err = other.Acquire(kctx, 1)
		cancel()
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "limit %d", limit)
		_, err = other.TryAcquire(ctx, 1)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	}
	require.Empty(t, ephemeralsOf(t, ss[0].Client(), path, ss[2].SessionID()), "a mismatch leaves nothing")
	require.NoError(t, l.Release(ctx))
	require.NoError(t, await(t, res, 10*time.Second, "waiter").err)
}

// WithPermitLayout is a Semaphore's option only.
func TestQueueLayoutOnlyForSemaphore(t *testing.T) {
	t.Parallel()
	c := shared(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, "semq")
	_, err := zklock.NewMutex(s, path, zklock.WithPermitLayout())
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewRWMutex(s, path, zklock.WithPermitLayout())
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewElection(s, path, zklock.WithPermitLayout())
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewReentrantMutex(s, path, zklock.WithPermitLayout())
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewSemaphore(s, path, 0, zklock.WithPermitLayout())
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	sem := newQueueSem(t, s, path, 2)
	_, err = sem.Acquire(ctxFor(t), 3)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
}
