package zklock_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// Finding 4: after Break (force) deleted a cohort's node and a rival holds,
// the cohort hands that node on to no local waiter: the waiter enqueues
// again, behind the rival, and the old holder's Unlock reports the loss.
func TestCohortAfterBreakZK(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "cohort")
	s := newSession(t, c.Servers())
	a, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	b, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	node := zklock.NodeOf(a)
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(ctx) }()
	eventually(t, 10*time.Second, "b waits in the cohort", func() bool { return zklock.CohortWaiters(s, path) == 1 })
	rs := newSession(t, c.Servers())
	r, err := zklock.NewMutex(rs, path)
	require.NoError(t, err)
	rgot := make(chan error, 1)
	go func() { rgot <- r.Lock(ctx) }()
	eventually(t, 10*time.Second, "the rival waits for the cohort's node", func() bool { return watches(t, c, rs.Client().SessionID(), node) })
	_, err = zklock.Break(ctx, newSession(t, c.Servers()), path, true)
	require.NoError(t, err)
	require.NoError(t, <-rgot, "the rival holds once the cohort's node is broken")
	// A cohort that watches its node enqueues again for b once it sees it
	// deleted. Give it the time: a bound, not an assertion (the assertion
	// is on what a's Unlock hands on).
	within(5*time.Second, func() bool { return len(ownedBy(t, s, s.Client().SessionID(), path)) == 1 })
	uerr := a.Unlock(ctx)
	if err, returned := returnsOr(t, "b returns or its node waits for the rival", bgot, func() bool {
		return watches(t, c, s.Client().SessionID(), zklock.NodeOf(r))
	}); returned {
		t.Fatalf("local waiter b: Lock returned %v (Lost closed: %v) while the rival holds; a's Unlock: %v",
			err, closed(b.Lost()), uerr)
	}
	require.ErrorIs(t, uerr, zklock.ErrLockLost)
	rtoken := r.Token()
	require.NoError(t, r.Unlock(ctx))
	require.NoError(t, <-bgot)
	require.Greater(t, b.Token(), rtoken)
	require.False(t, closed(b.Lost()))
	require.NoError(t, b.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
}
