package zklock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zktest"
)

// On ZooKeeper 3.9 and later the queue layout's nodes count the nodes ahead
// of them from the deletions their session's one persistent recursive watch
// on the semaphore's path (addWatch) reports: the server lists that path
// for the session, and no node's.

// watchesOf returns the paths session sid watches, from the server's wchc.
func watchesOf(t *testing.T, c server, sid int64) []string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	ws, err := c.Watches(ctx)
	require.NoError(t, err)
	return ws[sid]
}

// awaitTracks waits until session s watches path, the semaphore's, and
// nothing else.
func awaitTracks(t *testing.T, c server, s *zklock.Session, path string) {
	t.Helper()
	eventually(t, 10*time.Second, "the session's one watch on the semaphore's path", func() bool {
		return slices.Equal(watchesOf(t, c, s.Client().SessionID()), []string{path})
	})
}

// awaitRank waits until the holder of l has published rank in its node.
func awaitRank(t *testing.T, s *zklock.Session, l *zklock.Lease, rank int) {
	t.Helper()
	eventually(t, 10*time.Second, "the holder's rank published", func() bool {
		data, _, err := s.Client().Get(t.Context(), zklock.NodeOf(l))
		r, ok := queue.PermitRank(data)
		return err == nil && ok && r == rank
	})
}

// A holder keeps counting the nodes ahead of it with no watch of its own
// and no read: when the session of the node ahead dies, the holder hears of
// the deletion through its session's persistent watch, publishes its own
// rank, and the waiter behind it, which hears of the same deletion, is
// granted. The crashed holder's lease reports its loss.
func TestSemaphoreQueueTrackedCrashedHolder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	px := zktest.NewProxy(t, c.Servers())
	first, mid, fol, waiter := trackedSession(t, c.Servers()), trackedSession(t, px.Addrs()),
		trackedSession(t, c.Servers()), trackedSession(t, c.Servers())
	l0, err := newQueueSem(t, first, path, 2).Acquire(ctx, 1)
	require.NoError(t, err)
	lm, err := newQueueSem(t, mid, path, 2).Acquire(ctx, 1)
	require.NoError(t, err)
	resF, lf := acquireAsync(ctx, newQueueSem(t, fol, path, 2), 1)
	awaitTracks(t, c, fol, path)
	require.NoError(t, l0.Release(ctx)) // fol holds at the deletion
	require.NoError(t, await(t, resF, 10*time.Second, "the third, at the first one's release").err)
	resW, lw := acquireAsync(ctx, newQueueSem(t, waiter, path, 2), 1)
	awaitTracks(t, c, waiter, path)
	pending(t, resW, 200*time.Millisecond, "the waiter behind two holders")
	require.Equal(t, []string{path}, watchesOf(t, c, fol.Client().SessionID()), "the holder still counts, by its session's one watch")

	require.NoError(t, c.ExpireSession(ctx, px, mid.Client().SessionID()))
	require.NoError(t, await(t, resW, 10*time.Second, "the waiter, once the crashed holder's node went").err)
	awaitRank(t, fol, *lf, 1) // the holder behind the crashed one saw it go
	select {
	case <-lm.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the crashed holder's lease did not report its loss")
	}
	select {
	case <-(*lf).Lost():
		t.Fatal("the third lost its lease")
	default:
	}
	require.NoError(t, (*lf).Release(ctx))
	require.NoError(t, (*lw).Release(ctx))
}

// Events sent while a waiter's connection is down are lost: the persistent
// watch is set again on the reconnect (the same session), but the deletion
// made meanwhile must be found by listing again, or the waiter would wait
// for an event that came and went.
func TestSemaphoreQueueTrackedReconnect(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	px := zktest.NewProxy(t, c.Servers())
	h1, h2 := trackedSession(t, c.Servers()), trackedSession(t, c.Servers())
	ws := trackedSession(t, px.Addrs(), zklock.WithSessionTimeout(4*time.Second))
	l1, err := newQueueSem(t, h1, path, 2).Acquire(ctx, 1)
	require.NoError(t, err)
	l2, err := newQueueSem(t, h2, path, 2).Acquire(ctx, 1)
	require.NoError(t, err)
	res, lw := acquireAsync(ctx, newQueueSem(t, ws, path, 2), 1)
	awaitTracks(t, c, ws, path)
	sid := ws.Client().SessionID()
	conns, _, _ := px.Stats()

	px.Blackhole()
	require.NoError(t, l1.Release(ctx))
	awaitRank(t, h2, l2, 1) // after the deletion, whose event is held in the proxy
	px.Reset()              // and dropped with the connection
	px.Heal()
	require.NoError(t, await(t, res, 10*time.Second, "the waiter, after its reconnect").err)
	again, _, _ := px.Stats()
	require.Greater(t, again, conns, "the client reconnected")
	require.Equal(t, sid, ws.Client().SessionID(), "the same session: a reconnect, not an expiry")
	awaitTracks(t, c, ws, path) // the watch was set again on the new connection
	require.NoError(t, l2.Release(ctx))
	require.NoError(t, (*lw).Release(ctx))
}

// Many contended leases leave no watch behind on the server: each session
// holds its one watch on the semaphore's path however many leases it took,
// and none on a node.
func TestSemaphoreQueueTrackedNoLeak(t *testing.T) {
	t.Parallel()
	const clients, rounds = 4, 40
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	ss := manySessions(t, c.Servers(), clients)
	for _, s := range ss {
		zklock.AssumeWatchModes(s)
	}
	cycle := func(n int) {
		t.Helper()
		var results []<-chan result
		for _, s := range ss {
			sem := newQueueSem(t, s, path, 2)
			results = append(results, async(func() error {
				for range n {
					l, err := sem.Acquire(ctx, 1)
					if err != nil {
						return err
					}
					if err := l.Release(ctx); err != nil {
						return err
					}
				}
				return nil
			}))
		}
		for _, r := range results {
			require.NoError(t, await(t, r, 30*time.Second, "the clients' leases").err)
		}
	}
	cycle(2)
	count := func() (int64, map[int64][]string) {
		n, err := c.WatchCount(ctx)
		require.NoError(t, err)
		ws, err := c.Watches(ctx)
		require.NoError(t, err)
		return n, ws
	}
	before, _ := count()
	cycle(rounds)
	after, ws := count()
	t.Logf("server watches after %d leases: %d, after %d: %d", 2*clients, before, (2+rounds)*clients, after)
	require.Equal(t, before, after, "watches left by %d leases", rounds*clients)
	// ZooKeeper 3.8 counts a persistent watch twice (its data and child
	// tables): at most one watch per session.
	require.LessOrEqual(t, after, int64(2*clients), "at most one watch per session")
	for _, s := range ss {
		for _, p := range ws[s.Client().SessionID()] {
			require.Equal(t, path, p, "a watch on a node of the semaphore")
		}
	}
}

// trackedSession is newSession with tracking assumed to work on this
// repository's 3.8 servers (zklock.AssumeWatchModes): the tests of
// tracking set no other watch of the session on the tracked path.
func trackedSession(t *testing.T, servers []string, opts ...zklock.SessionOption) *zklock.Session {
	t.Helper()
	s := newSession(t, servers, opts...)
	zklock.AssumeWatchModes(s)
	return s
}
