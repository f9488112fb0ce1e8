package zklock_test

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Adversarial review of issue 38 item 3 (the semaphore's queue layout
// counting the nodes ahead from its session's persistent recursive watch).
//
// ZooKeeper 3.8 keeps one watch mode per (session, path) in its data watch
// table (WatchManager.addWatch calls WatcherModeManager.setWatcherMode,
// which for a standard watch removes the entry): a getData or exists watch
// that a session sets on the semaphore's path itself after its addWatch
// there turns the recursive watch into a one-shot standard watch on the
// path, and the deletions of the path's children are no longer sent to the
// session (ZOOKEEPER-4466). WatchLock sets such a watch (the path's data: a
// semaphore's limit) on every round. A tracked waiter of the same session
// then never hears that the permit ahead of it was released (5 of 6 runs
// before the fix). zklock now tracks only where every server said it runs
// 3.9 or later: on this repository's 3.8 the waiter takes the one-shot
// path, and holds.
func TestReviewTrackedWaiterBesideWatchLockOfItsSession(t *testing.T) {
	t.Parallel()
	c := shared(t)
	for _, watch := range []bool{false, true} {
		name := map[bool]string{false: "alone", true: "beside WatchLock"}[watch]
		t.Run(name, func(t *testing.T) { advTrackedWaiter(t, c, watch) })
	}
}

// advTrackedWaiter: a holder and two waiters, the middle one cancels, the
// holder releases; with watch, the last waiter's session runs WatchLock on
// the path.
func advTrackedWaiter(t *testing.T, c server, watch bool) {
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	holderS, midS, waiterS := newSession(t, c.Servers()), newSession(t, c.Servers()), newSession(t, c.Servers())
	held, err := newQueueSem(t, holderS, path, 1).Acquire(ctx, 1)
	require.NoError(t, err)
	midCtx, midCancel := context.WithCancel(ctx)
	defer midCancel()
	resM, _ := acquireAsync(midCtx, newQueueSem(t, midS, path, 1), 1)
	eventually(t, 10*time.Second, "the middle waiter's node", func() bool {
		return len(permitNodes(t, holderS, path)) == 2
	})

	resW, _ := acquireAsync(ctx, newQueueSem(t, waiterS, path, 1), 1)
	eventually(t, 10*time.Second, "the last waiter's node", func() bool {
		return len(permitNodes(t, holderS, path)) == 3
	})

	if watch {
		// The waiter's own session watches the path, as any observer would.
		wctx, cancel := context.WithCancel(ctx)
		defer cancel()
		states, err := zklock.WatchLock(wctx, waiterS, path)
		require.NoError(t, err)
		eventually(t, 10*time.Second, "WatchLock shows the holder and the two waiters", func() bool {
			select {
			case st := <-states:
				return len(st.Holders) == 1 && len(st.Waiting) == 2
			default:
				return false
			}
		})
		// WatchLock sets its watch on the path's data before it reads the
		// state, and on the holder's node after: once the server holds the
		// latter, it has set the former.
		eventually(t, 10*time.Second, "WatchLock's watch on the holder's node", func() bool {
			return slices.Contains(watchesOf(t, c, waiterS.Client().SessionID()), zklock.NodeOf(held))
		})
	}

	// The waiter in the middle gives up: a deletion of a node WatchLock
	// does not watch (a waiter's), which only the recursive watch reports.
	midCancel()
	require.ErrorIs(t, await(t, resM, 10*time.Second, "the middle waiter's cancel").err, context.Canceled)
	eventually(t, 10*time.Second, "the middle waiter's node gone", func() bool {
		return len(permitNodes(t, holderS, path)) == 2
	})
	require.NoError(t, held.Release(ctx))
	r := await(t, resW, 15*time.Second, "the waiter of the session that also runs WatchLock, once the only permit was released and the waiter ahead had left")
	require.NoError(t, r.err)
}

// A tracked waiter cut off from the server (same session, reconnected)
// while the waiter ahead of it leaves and the holder releases: the
// deletions' events are lost with the connection, and the waiter must look
// again at the reconnect.
func TestReviewTrackedWaiterReconnectLosesEvents(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	px := zktest.NewProxy(t, c.Servers())
	holderS, midS := trackedSession(t, c.Servers()), trackedSession(t, c.Servers())
	waiterS := trackedSession(t, px.Addrs(), zklock.WithSessionTimeout(10*time.Second))
	held, err := newQueueSem(t, holderS, path, 1).Acquire(ctx, 1)
	require.NoError(t, err)
	midCtx, midCancel := context.WithCancel(ctx)
	defer midCancel()
	resM, _ := acquireAsync(midCtx, newQueueSem(t, midS, path, 1), 1)
	eventually(t, 10*time.Second, "the middle waiter's node", func() bool { return len(permitNodes(t, holderS, path)) == 2 })
	resW, lw := acquireAsync(ctx, newQueueSem(t, waiterS, path, 1), 1)
	awaitTracks(t, c, waiterS, path)
	eventually(t, 10*time.Second, "the last waiter's node", func() bool { return len(permitNodes(t, holderS, path)) == 3 })

	px.Blackhole()
	midCancel()
	require.ErrorIs(t, await(t, resM, 10*time.Second, "the middle waiter's cancel").err, context.Canceled)
	require.NoError(t, held.Release(ctx))
	eventually(t, 10*time.Second, "only the cut-off waiter's node", func() bool { return len(permitNodes(t, holderS, path)) == 1 })
	px.Reset() // the events held back are lost with the connection
	px.Heal()
	require.NoError(t, await(t, resW, 15*time.Second, "the cut-off waiter once reconnected").err)
	conns, _, _ := px.Stats()
	require.GreaterOrEqual(t, conns, 2, "the waiter's session reconnected")
	require.Equal(t, waiterS.Client().SessionID(), mustSessionOfLease(t, holderS, *lw))
	require.NoError(t, (*lw).Release(ctx))
}

// mustSessionOfLease returns the ephemeral owner of l's node.
func mustSessionOfLease(t *testing.T, s *zklock.Session, l *zklock.Lease) int64 {
	t.Helper()
	_, st, err := s.Client().Get(t.Context(), zklock.NodeOf(l))
	require.NoError(t, err)
	return st.EphemeralOwner
}

// Two waiters of one session share its one watch on the path: each is
// granted at the release of the permit it waits for, and the first one's
// release (which stops its tracking) does not stop the second's.
func TestReviewTrackedTwoWaitersOneSession(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	h1S, h2S, ws := trackedSession(t, c.Servers()), trackedSession(t, c.Servers()), trackedSession(t, c.Servers())
	h1, err := newQueueSem(t, h1S, path, 2).Acquire(ctx, 1)
	require.NoError(t, err)
	h2, err := newQueueSem(t, h2S, path, 2).Acquire(ctx, 1)
	require.NoError(t, err)
	sem := newQueueSem(t, ws, path, 2)
	r1, l1 := acquireAsync(ctx, sem, 1)
	eventually(t, 10*time.Second, "the first waiter's node", func() bool { return len(permitNodes(t, h1S, path)) == 3 })
	r2, l2 := acquireAsync(ctx, sem, 1)
	eventually(t, 10*time.Second, "the second waiter's node", func() bool { return len(permitNodes(t, h1S, path)) == 4 })
	awaitTracks(t, c, ws, path)

	require.NoError(t, h1.Release(ctx))
	require.NoError(t, await(t, r1, 10*time.Second, "the first waiter").err)
	pending(t, r2, 200*time.Millisecond, "the second waiter while two hold")
	require.NoError(t, (*l1).Release(ctx))
	require.NoError(t, await(t, r2, 10*time.Second, "the second waiter, at its own session's first lease's release").err)
	r3, _ := acquireAsync(ctx, newQueueSem(t, h1S, path, 2), 1)
	pending(t, r3, 200*time.Millisecond, "a third while two hold")
	require.NoError(t, h2.Release(ctx))
	require.NoError(t, await(t, r3, 10*time.Second, "the third").err)
	require.NoError(t, (*l2).Release(ctx))
}

// The other side of the same server behaviour: a WatchLock started before a
// tracked acquisition of its own session has its watches on the path
// overridden by the addWatch, whose recursive mode ignores child changes:
// WatchLock no longer hears of contenders joining (only of changes to the
// holders' nodes it watches, and of the path's data). The control runs the
// waiter on another session than WatchLock's. Fixed as above (2 of 2
// failed before): on 3.8 no addWatch is set.
func TestReviewWatchLockBeforeTrackedWaiterOfItsSession(t *testing.T) {
	t.Parallel()
	c := shared(t)
	for _, own := range []bool{false, true} {
		name := map[bool]string{false: "waiter of another session", true: "waiter of its session"}[own]
		t.Run(name, func(t *testing.T) { advWatchLockBeforeTracked(t, c, own) })
	}
}

func advWatchLockBeforeTracked(t *testing.T, c server, own bool) {
	ctx := ctxFor(t)
	path := lockPath(t, "semq")
	holderS, watchS, otherS := newSession(t, c.Servers()), newSession(t, c.Servers()), newSession(t, c.Servers())
	held, err := newQueueSem(t, holderS, path, 1).Acquire(ctx, 1)
	require.NoError(t, err)
	defer func() { require.NoError(t, held.Release(ctx)) }()
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	states, err := zklock.WatchLock(wctx, watchS, path)
	require.NoError(t, err)
	waiting := func(n int) func() bool {
		return func() bool {
			select {
			case st := <-states:
				return len(st.Holders) == 1 && len(st.Waiting) == n
			default:
				return false
			}
		}
	}
	eventually(t, 10*time.Second, "WatchLock shows the holder", waiting(0))
	waiterS := otherS
	if own {
		waiterS = watchS
	}
	actx, acancel := context.WithCancel(ctx)
	defer acancel()
	res, _ := acquireAsync(actx, newQueueSem(t, waiterS, path, 1), 1)
	eventually(t, 10*time.Second, "the waiter's node", func() bool { return len(permitNodes(t, holderS, path)) == 2 })
	eventually(t, 10*time.Second, "WatchLock shows the waiter", waiting(1))
	acancel()
	require.ErrorIs(t, await(t, res, 10*time.Second, "the waiter's cancel").err, context.Canceled)
}
