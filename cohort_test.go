package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// grantLog records acquisitions in the order they happened, checking
// exclusion as it goes.
type grantLog struct {
	mu      sync.Mutex
	holders int
	overlap int
	who     []string
	tokens  []int64
}

func (g *grantLog) enter(who string, token int64) {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holders++
	if g.holders > 1 {
		g.overlap++
	}
	g.who = append(g.who, who)
	g.tokens = append(g.tokens, token)
}

func (g *grantLog) exit() {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.holders--
}

// hammer runs n cycles of Lock, a check of exclusion over a yield, and
// Unlock, returning the first error.
func hammer(ctx context.Context, m *zklock.Mutex, who string, n int, g *grantLog) error {
	for range n {
		if err := m.Lock(ctx); err != nil {
			return fmt.Errorf("%s: Lock: %w", who, err)
		}
		g.enter(who, m.Token())
		time.Sleep(100 * time.Microsecond) // a critical section others could overlap
		g.exit()
		if err := m.Unlock(ctx); err != nil {
			return fmt.Errorf("%s: Unlock: %w", who, err)
		}
	}
	return nil
}

// Cohort handles of one session and plain handles of other sessions on one
// path exclude each other, tokens strictly increase in grant order across
// local and remote grants, and the cohort needs far fewer requests than
// one node per acquisition would.
func TestCohortExclusionAndTokens(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	path := lockPath(t, "cohort")
	local := newSession(t, c.Servers())
	var ms []*zklock.Mutex
	for range 8 {
		m, err := zklock.NewMutex(local, path, zklock.WithCohort(8, time.Hour))
		require.NoError(t, err)
		ms = append(ms, m)
	}
	var remote []*zklock.Mutex
	for range 2 {
		m, err := zklock.NewMutex(newSession(t, c.Servers()), path)
		require.NoError(t, err)
		remote = append(remote, m)
	}
	ctx := ctxFor(t)
	g := &grantLog{}
	before := packets(t, c)
	errs := make(chan error, len(ms)+len(remote))
	var wg sync.WaitGroup
	for i, m := range ms {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- hammer(ctx, m, fmt.Sprintf("local-%d", i), 40, g) }()
	}
	for i, m := range remote {
		wg.Add(1)
		go func() { defer wg.Done(); errs <- hammer(ctx, m, fmt.Sprintf("remote-%d", i), 10, g) }()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	reqs := packets(t, c) - before
	require.Zero(t, g.overlap, "holders overlapped")
	require.Len(t, g.who, 8*40+2*10)
	for i := 1; i < len(g.tokens); i++ {
		require.Greater(t, g.tokens[i], g.tokens[i-1], "token of grant %d (%s) after %s", i, g.who[i], g.who[i-1])
	}
	perAcq := float64(reqs) / float64(len(g.who))
	t.Logf("%d acquisitions, %d server requests (%.2f each)", len(g.who), reqs, perAcq)
	require.Less(t, perAcq, 1.5, "a cohort must not cost a node per acquisition")
	requireNoEphemerals(t, c, local.Client().SessionID(), path, false)
}

// A waiter of another session queued behind the cohort's node holds after
// at most the bound's number of local grants: the cohort's node ahead of
// it is granted at most that often, and the cohort's next node queues
// behind it.
func TestCohortBoundsRemoteWait(t *testing.T) {
	t.Parallel()
	const bound = 4
	c := shared(t)
	path := lockPath(t, "cohort")
	local := newSession(t, c.Servers())
	ctx, cancel := context.WithCancel(ctxFor(t))
	defer cancel()
	g := &grantLog{}
	var wg sync.WaitGroup
	for i := range 4 {
		m, err := zklock.NewMutex(local, path, zklock.WithCohort(bound, time.Hour))
		require.NoError(t, err)
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				if m.Lock(ctx) != nil {
					return
				}
				g.enter(fmt.Sprintf("local-%d", i), m.Token())
				time.Sleep(10 * time.Millisecond) // long enough to count grants while the remote waits
				g.exit()
				if m.Unlock(context.Background()) != nil {
					return
				}
			}
		}()
	}
	grants := func() int { g.mu.Lock(); defer g.mu.Unlock(); return len(g.who) }
	eventually(t, 10*time.Second, "the cohort holds", func() bool { return grants() > 2*bound })
	rs := newSession(t, c.Servers())
	r, err := zklock.NewMutex(rs, path)
	require.NoError(t, err)
	for round := range 3 {
		// Counted from when the remote waiter's node is seen (a child
		// watch fires), which is after it exists: a count that can only
		// be low, and by less than one local hold.
		_, _, ch, err := rs.Client().ChildrenW(ctx, path)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() { got <- r.Lock(ctx) }()
		for seen := false; !seen; {
			select {
			case <-ch.Done():
			case <-ctx.Done():
				t.Fatal(ctx.Err())
			}
			seen = len(ownedBy(t, rs, rs.Client().SessionID(), path)) == 1
			if !seen {
				_, _, ch, err = rs.Client().ChildrenW(ctx, path)
				require.NoError(t, err)
			}
		}
		queued := grants()
		require.NoError(t, <-got)
		localGrants := grants() - queued
		t.Logf("round %d: %d local grants before the remote waiter held", round, localGrants)
		require.LessOrEqual(t, localGrants, bound)
		require.NoError(t, r.Unlock(ctx))
	}
	cancel()
	wg.Wait()
	require.Zero(t, g.overlap)
}

// Guard: once a local holder took a Guard, the local grant that follows
// invalidates it (the old holder's guarded multi fails), and the new
// holder's Guard commits.
func TestCohortGuard(t *testing.T) {
	t.Parallel()
	c := shared(t)
	path := lockPath(t, "cohort")
	s := newSession(t, c.Servers())
	ctx := ctxFor(t)
	// A bound of an hour: with the default 100ms, a busy machine can stretch
	// a's hold past the bound, and the cohort then rightly releases the
	// node instead of handing it on.
	a, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	b, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	ga := a.Guard()
	write := func(guard *zk.CheckOp, v string) error {
		_, err := s.Client().Multi(ctx, guard, &zk.SetDataOp{Path: path, Data: []byte(v), Version: -1})
		return err
	}
	require.NoError(t, write(ga, "a"), "the holder's guard commits")
	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx) }()
	eventually(t, 10*time.Second, "b waits in the cohort", func() bool { return zklock.CohortWaiters(s, path) == 1 })
	require.NoError(t, a.Unlock(ctx))
	require.NoError(t, <-got)
	require.Zero(t, a.Token(), "a holds nothing")
	require.Equal(t, ga.Path, zklock.NodeOf(b), "b holds the cohort's node by a local handoff")
	require.ErrorIs(t, write(ga, "stale a"), zk.ErrBadVersion, "a's guard after the handoff")
	require.NoError(t, write(b.Guard(), "b"), "b's guard commits")
	require.NoError(t, b.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
}

// Unlock by a handle that does not hold fails; a cancelled local waiter
// leaves nothing behind.
func TestCohortMisuseAndCancel(t *testing.T) {
	t.Parallel()
	c := shared(t)
	path := lockPath(t, "cohort")
	s := newSession(t, c.Servers())
	ctx := ctxFor(t)
	a, err := zklock.NewMutex(s, path, zklock.WithCohort(0, 0))
	require.NoError(t, err)
	b, err := zklock.NewMutex(s, path, zklock.WithCohort(0, 0))
	require.NoError(t, err)
	require.ErrorIs(t, b.Unlock(ctx), zklock.ErrNotLocked)
	require.NoError(t, a.Lock(ctx))
	require.ErrorIs(t, b.Unlock(ctx), zklock.ErrNotLocked)
	var le *zklock.LockedError
	require.ErrorAs(t, b.TryLock(ctx), &le)
	bctx, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	require.ErrorIs(t, b.Lock(bctx), context.DeadlineExceeded)
	require.NoError(t, a.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
	_, err = zklock.NewRWMutex(s, path, zklock.WithCohort(0, 0))
	require.True(t, errors.Is(err, zklock.ErrInvalidArgument), "%v", err)
}

// Loss while a cohort holds: the holder's Lost fires before a rival of
// another session holds, a waiting local handle is never handed the lost
// node, and it holds later under the new session, with a larger token.
func TestCohortLoss(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "cohort")
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	a, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	b, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	lost, token := a.Lost(), a.Token()
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(ctx) }()
	eventually(t, 10*time.Second, "b waits in the cohort", func() bool { return zklock.CohortWaiters(s, path) == 1 })

	rival, err := zklock.NewMutex(newSession(t, c.Servers()), path)
	require.NoError(t, err)
	lossBeforeRival(ctx, t, lost, rival, p.Blackhole)
	select {
	case err := <-bgot:
		t.Fatalf("the local waiter returned (%v) while the rival holds", err)
	default:
	}
	p.Heal()
	require.ErrorIs(t, a.Unlock(ctx), zklock.ErrLockLost)
	require.NoError(t, rival.Unlock(ctx))
	require.NoError(t, <-bgot)
	require.Greater(t, b.Token(), token)
	require.NoError(t, b.Unlock(ctx))
}

// A local waiter alone, whose ctx ends while the cohort's node waits in
// the queue, takes the node out with it: nothing is left on the server.
func TestCohortCancelOnlyWaiter(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "cohort")
	s := newSession(t, c.Servers())
	holder, err := zklock.NewMutex(newSession(t, c.Servers()), path)
	require.NoError(t, err)
	require.NoError(t, holder.Lock(ctx))
	m, err := zklock.NewMutex(s, path, zklock.WithCohort(0, 0))
	require.NoError(t, err)
	mctx, cancel := context.WithCancel(ctx)
	got := make(chan error, 1)
	go func() { got <- m.Lock(mctx) }()
	eventually(t, 10*time.Second, "the cohort's node queues", func() bool {
		return len(ownedBy(t, s, s.Client().SessionID(), path)) == 1
	})
	cancel()
	require.ErrorIs(t, <-got, context.Canceled)
	eventually(t, 10*time.Second, "the cohort's node is gone", func() bool {
		return len(ownedBy(t, s, s.Client().SessionID(), path)) == 0
	})
	require.NoError(t, holder.Unlock(ctx))
	require.NoError(t, m.Lock(ctx), "the cohort acquires again")
	require.NoError(t, m.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
}

// The cohort's guard bump is a data write on its node: a waiter of another
// session behind that node must not take it for a release (a cohort's node
// does not announce releases), and waits until the cohort lets go.
func TestCohortGuardBumpIsNoRelease(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "cohort")
	s := newSession(t, c.Servers())
	a, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	b, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	node := zklock.NodeOf(a)
	require.NotNil(t, a.Guard())
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(ctx) }()
	eventually(t, 10*time.Second, "b waits in the cohort", func() bool { return zklock.CohortWaiters(s, path) == 1 })
	rs := newSession(t, c.Servers())
	r, err := zklock.NewMutex(rs, path)
	require.NoError(t, err)
	rgot := make(chan error, 1)
	go func() { rgot <- r.Lock(ctx) }()
	watching := func() bool {
		ws, err := c.Watches(ctx)
		require.NoError(t, err)
		return slices.Contains(ws[rs.Client().SessionID()], node)
	}
	eventually(t, 10*time.Second, "the remote waiter watches the cohort's node", watching)

	require.NoError(t, a.Unlock(ctx)) // bumps the node's data: a took a Guard
	require.NoError(t, <-bgot)
	require.Equal(t, node, zklock.NodeOf(b), "a local handoff")
	// The bump fired the remote waiter's watch; it looked again and
	// watches the node again, still waiting.
	eventually(t, 10*time.Second, "the remote waiter watches the cohort's node again", watching)
	select {
	case err := <-rgot:
		t.Fatalf("the remote waiter's Lock returned (%v) while the cohort holds", err)
	default:
	}
	require.NoError(t, b.Unlock(ctx))
	require.NoError(t, <-rgot)
	require.NoError(t, r.Unlock(ctx))
}
