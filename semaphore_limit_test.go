package zklock_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// A Semaphore whose limit differs from the one stored for its path is
// refused with ErrInvalidArgument before it waits or queues, smaller or
// larger, TryAcquire or Acquire, whether or not other clients are queued,
// and leaves nothing on the server (issue 23).
func TestSemaphoreLimitMismatchRefusedAtOnce(t *testing.T) {
	t.Parallel()
	c := shared(t)
	for _, limit := range []int{1, 3} {
		for _, try := range []bool{true, false} {
			for _, queued := range []bool{false, true} {
				name := fmt.Sprintf("limit %d try %v queued %v", limit, try, queued)
				t.Run(name, func(t *testing.T) {
					limitMismatch(t, c.Servers(), limit, try, queued)
				})
			}
		}
	}
}

// limitMismatch has a limit-2 client hold a lease (both, with a third
// client queued, when queued) and a fresh client of limit acquire.
func limitMismatch(t *testing.T, addrs []string, limit int, try, queued bool) {
	ctx := ctxFor(t)
	ss := manySessions(t, addrs, 3)
	path := lockPath(t, "sem")
	dirs := []string{path + "/locks", path + "/leases"}
	held := 1
	if queued {
		held = 2
	}
	a, err := newSem(t, ss[0], path, 2).Acquire(ctx, held)
	require.NoError(t, err)
	var waiter <-chan result
	var lw **zklock.Lease
	if queued {
		waiter, lw = acquireAsync(ctx, newSem(t, ss[2], path, 2), 1)
		eventually(t, 10*time.Second, "a waiter queued", func() bool {
			return len(nodeNames(t, ss[0], dirs[0])) == 1
		})
	}
	before := len(nodeNames(t, ss[0], dirs[0])) + len(nodeNames(t, ss[0], dirs[1]))

	// Bounded so that an acquisition that queues instead fails the
	// assertion rather than hang the test.
	bctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	b := newSem(t, ss[1], path, limit)
	if try {
		_, err = b.TryAcquire(bctx, 1)
	} else {
		_, err = b.Acquire(bctx, 1)
	}
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	require.Empty(t, ownedBy(t, ss[0], ss[1].SessionID(), dirs...), "the refused client left nodes")
	require.Equal(t, before, len(nodeNames(t, ss[0], dirs[0]))+len(nodeNames(t, ss[0], dirs[1])))

	require.NoError(t, a.Release(ctx))
	if queued {
		require.NoError(t, await(t, waiter, 10*time.Second, "the waiter").err)
		require.NoError(t, (*lw).Release(ctx))
	}
}
