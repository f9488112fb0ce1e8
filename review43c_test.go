package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// Adversarial review of issue 43 (a blocking MultiLock.Lock returns success
// only for a live hold), briefed with the claims: a part's node deleted by
// another client while Lock waits for a later part fires no loss signal, and
// Lock must see it on the server before it returns.

// rvNodesOf returns session sid's ephemeral nodes under dir.
func rvNodesOf(t *testing.T, c server, sid int64, dir string) []string {
	t.Helper()
	nodes, err := c.Ephemerals(ctxFor(t))
	require.NoError(t, err)
	var out []string
	for _, n := range nodes[sid] {
		if strings.HasPrefix(n, dir+"/") {
			out = append(out, n)
		}
	}
	return out
}

// rvRequireLive asserts that every node of ml's Guard exists as ms's and
// that a Multi guarded by it commits.
func rvRequireLive(ctx context.Context, t *testing.T, ms *zklock.Session, ml *zklock.MultiLock, parts int) {
	t.Helper()
	require.False(t, closed(ml.Lost()), "MultiLock.Lock returned a lost hold")
	g := ml.Guard()
	require.GreaterOrEqual(t, len(g), parts)
	var checks []zk.Op // the guard of every part but a sequence-layout one (nil: none)
	for _, op := range g {
		if op.(*zk.CheckOp) == nil {
			continue
		}
		checks = append(checks, op)
		n := op.(*zk.CheckOp).Path
		_, st, err := ms.Client().Get(ctx, n)
		require.NoError(t, err, "the MultiLock's node %s", n)
		require.Equal(t, ms.Client().SessionID(), st.EphemeralOwner, "the MultiLock's node %s", n)
	}
	if len(checks) < len(g) {
		_, err := ms.Client().Multi(ctx, g...)
		require.ErrorIs(t, err, zk.ErrInvalidArgument, "a Multi guarded by a guard with a sequence-layout part")
	}
	_, err := ms.Client().Multi(ctx, checks...)
	require.NoError(t, err, "a Multi guarded by ml.Guard() commits")
}

// rvBreakWhileWaiting runs the attack: ml (over parts on ms) takes every
// part but the last, root+"/z", which h (a Mutex of another session) holds;
// the node of ms under victim is deleted by another client (del), a rival
// (rival) then holds victim, and h lets go. Lock must not return nil while
// the rival holds; once the rival lets go (unrival) Lock returns and the
// hold is live; after Unlock nothing is left.
func rvBreakWhileWaiting(t *testing.T, c server, ms *zklock.Session, root, victim string, ml *zklock.MultiLock, nparts int,
	del func(ctx context.Context, node string), rival func(ctx context.Context), unrival func(ctx context.Context)) {
	t.Helper()
	rvBreakWhileWaitingAfter(t, c, ms, root, victim, ml, nparts, nil, del, rival, unrival, nil)
}

// rvBreakWhileWaitingAfter is rvBreakWhileWaiting with started (if not nil)
// called once Lock is under way, and unlocked (if not nil) once the
// MultiLock let go, before nothing of the session may be left.
func rvBreakWhileWaitingAfter(t *testing.T, c server, ms *zklock.Session, root, victim string, ml *zklock.MultiLock, nparts int,
	started func(ctx context.Context), del func(ctx context.Context, node string), rival func(ctx context.Context), unrival func(ctx context.Context),
	unlocked func(ctx context.Context)) {
	t.Helper()
	ctx := ctxFor(t)
	h, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/z")
	require.NoError(t, err)
	require.NoError(t, h.Lock(ctx))
	mlgot := make(chan error, 1)
	go func() { mlgot <- ml.Lock(ctx) }()
	if started != nil {
		started(ctx)
	}
	eventually(t, 10*time.Second, "the MultiLock holds every part but the last and waits for it", func() bool {
		return len(rvNodesOf(t, c, ms.Client().SessionID(), root)) == nparts
	})
	before := rvNodesOf(t, c, ms.Client().SessionID(), victim)
	require.Len(t, before, 1, "the MultiLock holds %s by one node", victim)
	del(ctx, before[0])
	rival(ctx)
	require.NoError(t, h.Unlock(ctx))
	if err, returned := returnsOr(t, "the MultiLock returns or starts over on "+victim, mlgot, func() bool {
		// Started over: queued on victim again (a semaphore also takes
		// its lock node while it waits), the broken node not among them.
		now := rvNodesOf(t, c, ms.Client().SessionID(), victim)
		return len(now) > 0 && !slices.Contains(now, before[0])
	}); returned {
		t.Fatalf("MultiLock.Lock returned %v while the rival holds %s (its node %s was deleted; the MultiLock's Lost closed: %v)",
			err, victim, before[0], closed(ml.Lost()))
	}
	unrival(ctx)
	select {
	case err := <-mlgot:
		require.NoError(t, err)
	case <-time.After(20 * time.Second):
		t.Fatal("MultiLock.Lock did not return within 20s of the rival letting go")
	}
	rvRequireLive(ctx, t, ms, ml, nparts)
	require.NoError(t, ml.Unlock(ctx))
	if unlocked != nil {
		unlocked(ctx)
	}
	requireNoEphemerals(t, c, ms.Client().SessionID(), root, false)
}

// Break of the middle part of three (a read part, between a Mutex in the
// sequence layout and the last, a Mutex) while Lock waits for the last.
func TestReviewBreak_MLMiddleReadPartOfThree(t *testing.T) {
	t.Parallel()
	c := shared(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	pa, err := zklock.NewMutex(ms, root+"/a", zklock.WithSequenceLayout())
	require.NoError(t, err)
	rw, err := zklock.NewRWMutex(ms, root+"/b")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pz, rw.ReadPart(), pa)
	require.NoError(t, err)
	bs := newSession(t, c.Servers())
	rv, err := zklock.NewRWMutex(newSession(t, c.Servers()), root+"/b")
	require.NoError(t, err)
	rvBreakWhileWaiting(t, c, ms, root, root+"/b", ml, 3,
		func(ctx context.Context, _ string) {
			broken, err := zklock.Break(ctx, bs, root+"/b", true)
			require.NoError(t, err)
			require.Len(t, broken, 1, "Break deleted the MultiLock's read node")
		},
		func(ctx context.Context) { require.NoError(t, rv.Lock(ctx), "the rival writer holds /b") },
		func(ctx context.Context) { require.NoError(t, rv.Unlock(ctx)) })
}

// The write lock of an RWMutex as the middle part, broken while Lock waits.
func TestReviewBreak_MLMiddleWritePartOfThree(t *testing.T) {
	t.Parallel()
	c := shared(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	pa, err := zklock.NewReentrantMutex(ms, root+"/a")
	require.NoError(t, err)
	rw, err := zklock.NewRWMutex(ms, root+"/b")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, rw, pz)
	require.NoError(t, err)
	bs := newSession(t, c.Servers())
	rv, err := zklock.NewRWMutex(newSession(t, c.Servers()), root+"/b")
	require.NoError(t, err)
	rvBreakWhileWaiting(t, c, ms, root, root+"/b", ml, 3,
		func(ctx context.Context, _ string) {
			broken, err := zklock.Break(ctx, bs, root+"/b", true)
			require.NoError(t, err)
			require.Len(t, broken, 1)
		},
		func(ctx context.Context) { require.NoError(t, rv.Lock(ctx), "the rival holds /b") },
		func(ctx context.Context) { require.NoError(t, rv.Unlock(ctx)) })
}

// A semaphore lease part whose node another client deletes while Lock waits
// for the last part (Break names no holder on a semaphore's path, so the
// node is deleted directly).
func TestReviewBreak_MLSemaphoreLeaseDeleted(t *testing.T) {
	t.Parallel()
	c := shared(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	sem, err := zklock.NewSemaphore(ms, root+"/a", 1)
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pz, sem)
	require.NoError(t, err)
	bs := newSession(t, c.Servers())
	rsem, err := zklock.NewSemaphore(newSession(t, c.Servers()), root+"/a", 1)
	require.NoError(t, err)
	var lease *zklock.Lease
	rvBreakWhileWaiting(t, c, ms, root, root+"/a", ml, 2,
		func(ctx context.Context, node string) { require.NoError(t, bs.Client().Delete(ctx, node, -1)) },
		func(ctx context.Context) {
			var err error
			lease, err = rsem.Acquire(ctx, 1)
			require.NoError(t, err, "the rival holds the one lease")
		},
		func(ctx context.Context) { require.NoError(t, lease.Release(ctx)) })
}

// A ReentrantMutex part its owner held before the MultiLock (the MultiLock
// re-enters it), broken while Lock waits for the last part. The owner's
// hold is gone with the node: Lock must not return nil while a rival holds
// it; it may return an error (a re-entry of a lost hold), and then leaves
// nothing on the server once the owner let go.
func TestReviewBreak_MLReenteredPartBroken(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	ra, err := zklock.NewReentrantMutex(ms, root+"/a")
	require.NoError(t, err)
	require.NoError(t, ra.Lock(ctx), "the owner holds /a before the MultiLock")
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pz, ra)
	require.NoError(t, err)
	h, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/z")
	require.NoError(t, err)
	require.NoError(t, h.Lock(ctx))
	mlgot := make(chan error, 1)
	go func() { mlgot <- ml.Lock(ctx) }()
	sid := ms.Client().SessionID()
	eventually(t, 10*time.Second, "the MultiLock re-entered /a and waits for /z", func() bool {
		return len(rvNodesOf(t, c, sid, root+"/z")) == 1
	})
	before := rvNodesOf(t, c, sid, root+"/a")
	require.Len(t, before, 1)
	broken, err := zklock.Break(ctx, newSession(t, c.Servers()), root+"/a", true)
	require.NoError(t, err)
	require.Len(t, broken, 1)
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	require.NoError(t, rv.Lock(ctx), "the rival holds /a")
	require.NoError(t, h.Unlock(ctx))
	err, returned := returnsOr(t, "the MultiLock returns or queues again on /a", mlgot, func() bool {
		now := rvNodesOf(t, c, sid, root+"/a")
		return len(now) == 1 && now[0] != before[0]
	})
	if returned {
		// The owner's hold was broken: an error is the honest answer; nil is not.
		require.Error(t, err, "MultiLock.Lock returned nil while the rival holds /a (the owner's node %s was broken)", before[0])
		require.NoError(t, rv.Unlock(ctx))
	} else {
		require.NoError(t, rv.Unlock(ctx))
		select {
		case err = <-mlgot:
		case <-time.After(20 * time.Second):
			t.Fatal("MultiLock.Lock did not return within 20s of the rival letting go")
		}
		if err == nil {
			rvRequireLive(ctx, t, ms, ml, 2)
			require.NoError(t, ml.Unlock(ctx))
		}
	}
	t.Logf("MultiLock.Lock after the re-entered part was broken: %v (returned while the rival held: %v)", err, returned)
	uerr := ra.Unlock(ctx)
	if uerr != nil {
		require.True(t, errors.Is(uerr, zklock.ErrLockLost) || errors.Is(uerr, zklock.ErrNotLocked), "owner's Unlock: %v", uerr)
	}
	requireNoEphemerals(t, c, sid, root, true)
}

// ctx ends while Lock, having found a part broken, waits again: the error
// matches ctx.Err() and nothing of the session is left on the server.
func TestReviewBreak_MLCtxEndsAfterBreakRestart(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, pz)
	require.NoError(t, err)
	h, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/z")
	require.NoError(t, err)
	require.NoError(t, h.Lock(ctx))
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mlgot := make(chan error, 1)
	go func() { mlgot <- ml.Lock(lctx) }()
	sid := ms.Client().SessionID()
	eventually(t, 10*time.Second, "the MultiLock holds /a and waits for /z", func() bool {
		return len(rvNodesOf(t, c, sid, root)) == 2
	})
	before := rvNodesOf(t, c, sid, root+"/a")
	require.Len(t, before, 1)
	_, err = zklock.Break(ctx, newSession(t, c.Servers()), root+"/a", true)
	require.NoError(t, err)
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	require.NoError(t, rv.Lock(ctx))
	require.NoError(t, h.Unlock(ctx))
	if err, returned := returnsOr(t, "the MultiLock queues again on /a", mlgot, func() bool {
		now := rvNodesOf(t, c, sid, root+"/a")
		return len(now) == 1 && now[0] != before[0]
	}); returned {
		t.Fatalf("MultiLock.Lock returned %v while the rival holds /a", err)
	}
	cancel()
	select {
	case err := <-mlgot:
		require.Error(t, err)
		require.ErrorIs(t, err, context.Canceled)
	case <-time.After(20 * time.Second):
		t.Fatal("MultiLock.Lock did not return within 20s of its ctx ending")
	}
	require.ErrorIs(t, ml.Unlock(ctx), zklock.ErrNotLocked)
	requireNoEphemerals(t, c, sid, root, false)
	require.NoError(t, rv.Unlock(ctx))
}

// A Break of the first part races the grant of the last (its holder lets go
// at the same moment), a bounded number of rounds. Whatever Lock returns, a
// hold it returns has Guard nodes of its session or its Guard fails (a
// Break after the final read is not Lock's to catch), and after Unlock
// nothing of the session is left.
func TestReviewBreak_MLBreakRacesLastGrant(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ms := newSession(t, c.Servers())
	hs := newSession(t, c.Servers())
	bs := newSession(t, c.Servers())
	sid := ms.Client().SessionID()
	var caught, after int
	for round := range 6 {
		root := lockPath(t, "ml43c") + "/" + string(rune('a'+round))
		pa, err := zklock.NewMutex(ms, root+"/a")
		require.NoError(t, err)
		pz, err := zklock.NewMutex(ms, root+"/z")
		require.NoError(t, err)
		ml, err := zklock.NewMultiLock(pa, pz)
		require.NoError(t, err)
		h, err := zklock.NewMutex(hs, root+"/z")
		require.NoError(t, err)
		require.NoError(t, h.Lock(ctx))
		mlgot := make(chan error, 1)
		go func() { mlgot <- ml.Lock(ctx) }()
		eventually(t, 10*time.Second, "the MultiLock holds /a and waits for /z", func() bool {
			return len(rvNodesOf(t, c, sid, root)) == 2
		})
		before := rvNodesOf(t, c, sid, root+"/a")[0]
		// Break (several requests) in even rounds, a bare delete of the
		// node (one request, so it usually lands before the final read) in
		// odd ones: both sides of the final read are tried.
		broke := make(chan error, 1)
		go func() {
			if round%2 == 0 {
				_, err := zklock.Break(ctx, bs, root+"/a", true)
				broke <- err
				return
			}
			broke <- bs.Client().Delete(ctx, before, -1)
		}()
		require.NoError(t, h.Unlock(ctx))
		require.NoError(t, <-broke)
		var lerr error
		select {
		case lerr = <-mlgot:
		case <-time.After(20 * time.Second):
			t.Fatal("MultiLock.Lock did not return within 20s (nobody else holds)")
		}
		require.NoError(t, lerr, "nobody else holds: Lock ends with every part")
		_, err = ms.Client().Multi(ctx, ml.Guard()...)
		if err == nil {
			caught++ // the broken node was seen and Lock started over, or the Break came before the first take
			rvRequireLive(ctx, t, ms, ml, 2)
		} else {
			// Only a Break after the final read may leave a dead node: the
			// Guard then fails, and the node of /a is the broken one.
			after++
			require.ErrorIs(t, err, zk.ErrNoNode, "round %d", round)
			_, _, gerr := ms.Client().Get(ctx, before)
			require.ErrorIs(t, gerr, zk.ErrNoNode)
		}
		uerr := ml.Unlock(ctx)
		if uerr != nil {
			require.ErrorIs(t, uerr, zklock.ErrLockLost, "round %d", round)
		}
		requireNoEphemerals(t, c, sid, root, false)
	}
	t.Logf("rounds: %d live at return, %d broken after the final read", caught, after)
}

// A cohort part (WithCohort), handed on locally from another handle of the
// cohort that took a Guard, broken while Lock waits for the last part.
func TestReviewBreak_MLCohortPartBroken(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	m1, err := zklock.NewMutex(ms, root+"/a", zklock.WithCohort(8, 10*time.Second))
	require.NoError(t, err)
	m2, err := zklock.NewMutex(ms, root+"/a", zklock.WithCohort(8, 10*time.Second))
	require.NoError(t, err)
	require.NoError(t, m1.Lock(ctx))
	require.NotNil(t, m1.Guard())
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pz, m2)
	require.NoError(t, err)
	bs := newSession(t, c.Servers())
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	rvBreakWhileWaitingAfter(t, c, ms, root, root+"/a", ml, 2,
		func(ctx context.Context) { require.NoError(t, m1.Unlock(ctx)) }, // a local handoff if m2 queued by now
		func(ctx context.Context, _ string) {
			broken, err := zklock.Break(ctx, bs, root+"/a", true)
			require.NoError(t, err)
			require.Len(t, broken, 1)
		},
		func(ctx context.Context) { require.NoError(t, rv.Lock(ctx), "the rival holds /a") },
		func(ctx context.Context) { require.NoError(t, rv.Unlock(ctx)) }, nil)
}

// A ReentrantMutex its owner held before the MultiLock is re-entered as the
// first part; another part (the middle one) is broken while Lock waits for
// the last, so Lock starts over, counting its share of the owner's hold
// down and up again. In the end it holds every part live, and after its
// Unlock the owner still holds, once: its own Unlock gives the node back.
func TestReviewBreak_MLRestartKeepsOwnersReentrantCount(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	ra, err := zklock.NewReentrantMutex(ms, root+"/a")
	require.NoError(t, err)
	require.NoError(t, ra.Lock(ctx), "the owner holds /a before the MultiLock")
	owned := rvNodesOf(t, c, ms.Client().SessionID(), root+"/a")
	require.Len(t, owned, 1)
	pb, err := zklock.NewMutex(ms, root+"/b")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pz, pb, ra)
	require.NoError(t, err)
	bs := newSession(t, c.Servers())
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/b")
	require.NoError(t, err)
	rvBreakWhileWaitingAfter(t, c, ms, root, root+"/b", ml, 3, nil,
		func(ctx context.Context, _ string) {
			broken, err := zklock.Break(ctx, bs, root+"/b", true)
			require.NoError(t, err)
			require.Len(t, broken, 1)
		},
		func(ctx context.Context) { require.NoError(t, rv.Lock(ctx), "the rival holds /b") },
		func(ctx context.Context) { require.NoError(t, rv.Unlock(ctx)) },
		func(ctx context.Context) {
			require.Equal(t, owned, rvNodesOf(t, c, ms.Client().SessionID(), root+"/a"),
				"the owner still holds /a by its own node after the MultiLock let go")
			_, err := ms.Client().Multi(ctx, ra.Guard())
			require.NoError(t, err, "the owner's Guard still commits")
			require.NoError(t, ra.Unlock(ctx), "the owner's own Unlock")
			require.ErrorIs(t, ra.Unlock(ctx), zklock.ErrNotLocked, "the owner held once, not more")
		})
}

// A ReentrantMutex its owner holds, re-entered as the last part, whose node
// was broken before MultiLock.Lock was called (a rival holds it now): Lock
// must not return nil.
func TestReviewBreak_MLLastPartReenteredAlreadyBroken(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	rz, err := zklock.NewReentrantMutex(ms, root+"/z")
	require.NoError(t, err)
	require.NoError(t, rz.Lock(ctx))
	_, err = zklock.Break(ctx, newSession(t, c.Servers()), root+"/z", true)
	require.NoError(t, err)
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/z")
	require.NoError(t, err)
	require.NoError(t, rv.Lock(ctx), "the rival holds /z")
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(rz, pa)
	require.NoError(t, err)
	err = ml.Lock(ctx)
	require.Error(t, err, "MultiLock.Lock returned nil with its last part's node broken and a rival holding it")
	require.ErrorIs(t, err, zklock.ErrLockLost)
	require.ErrorIs(t, ml.Unlock(ctx), zklock.ErrNotLocked)
	// A Break fires no loss signal, so the owner's Unlock of its broken hold
	// may return nil (Mutex.Unlock: ErrLockLost only if Lost fired).
	if uerr := rz.Unlock(ctx); uerr != nil {
		require.ErrorIs(t, uerr, zklock.ErrLockLost, "the owner's broken hold")
	}
	requireNoEphemerals(t, c, ms.Client().SessionID(), root, true)
	require.NoError(t, rv.Unlock(ctx))
}

// The connection drops right after the final read of the earlier part's
// node is sent (the server answers, the client loses the reply). Lock
// either reads again and returns a live hold, or returns an error and
// leaves nothing of the session on the server.
func TestReviewBreak_MLFinalReadReplyLost(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "ml43c")
	p := zktest.NewProxy(t, c.Servers())
	ms := newSession(t, p.Addrs())
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, pz)
	require.NoError(t, err)
	h, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/z")
	require.NoError(t, err)
	require.NoError(t, h.Lock(ctx))
	mlgot := make(chan error, 1)
	go func() { mlgot <- ml.Lock(ctx) }()
	sid := ms.Client().SessionID()
	eventually(t, 10*time.Second, "the MultiLock holds /a and waits for /z", func() bool {
		return zklock.NodeOf(pa) != "" && watches(t, c, sid, zklock.NodeOf(h))
	})
	var cut atomic.Bool
	var seen []int32 // under the proxy's lock
	p.ResetAfterRequest(func(op int32) bool {
		seen = append(seen, op)
		if op == 4 { // getData: the final read of /a's node (Stat)
			cut.Store(true)
			return true
		}
		return false
	})
	require.NoError(t, h.Unlock(ctx))
	var lerr error
	select {
	case lerr = <-mlgot:
	case <-time.After(30 * time.Second):
		t.Fatal("MultiLock.Lock did not return within 30s")
	}
	p.Heal()
	t.Logf("MultiLock.Lock returned %v; requests after arming: %v", lerr, seen)
	require.True(t, cut.Load(), "a read was cut")
	if lerr == nil {
		rvRequireLive(ctx, t, ms, ml, 2)
		require.NoError(t, ml.Unlock(ctx))
	} else {
		require.ErrorIs(t, ml.Unlock(ctx), zklock.ErrNotLocked)
	}
	requireNoEphemerals(t, c, sid, root, true)
}

// Two at once: the earlier part is broken (a rival holds it) and the reply
// to the final read of its node is lost to a connection reset. Lock must
// still not return nil while the rival holds.
func TestReviewBreak_MLBrokenAndFinalReadReplyLost(t *testing.T) {
	t.Parallel()
	c := shared(t)
	root := lockPath(t, "ml43c")
	p := zktest.NewProxy(t, c.Servers())
	ms := newSession(t, p.Addrs())
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, pz)
	require.NoError(t, err)
	bs := newSession(t, c.Servers())
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	var cut atomic.Bool
	rvBreakWhileWaiting(t, c, ms, root, root+"/a", ml, 2,
		func(ctx context.Context, _ string) {
			broken, err := zklock.Break(ctx, bs, root+"/a", true)
			require.NoError(t, err)
			require.Len(t, broken, 1)
		},
		func(ctx context.Context) {
			require.NoError(t, rv.Lock(ctx), "the rival holds /a")
			p.ResetAfterRequest(func(op int32) bool {
				if op == 4 { // getData: the final read of /a's node
					cut.Store(true)
					return true
				}
				return false
			})
		},
		func(ctx context.Context) {
			p.Heal()
			require.True(t, cut.Load(), "the final read was cut")
			require.NoError(t, rv.Unlock(ctx))
		})
}

// One MultiLock shared by goroutines: a second Lock beside the first
// returns ErrAlreadyLocked, and Guard, Tokens and Lost are read throughout
// while the first part is broken and Lock starts over. Guard is never a
// partial set of checks: nil until every part is held, then one per part.
func TestReviewBreak_MLSharedWhileBroken(t *testing.T) {
	t.Parallel()
	c := shared(t)
	root := lockPath(t, "ml43c")
	ms := newSession(t, c.Servers())
	pa, err := zklock.NewMutex(ms, root+"/a")
	require.NoError(t, err)
	pz, err := zklock.NewMutex(ms, root+"/z")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(pa, pz)
	require.NoError(t, err)
	stop := make(chan struct{})
	var once sync.Once
	halt := func() { once.Do(func() { close(stop) }) }
	t.Cleanup(halt) // a failure midway must not leave the reader running
	readers := make(chan string, 1)
	read := func() {
		bad := ""
		for {
			select {
			case <-stop:
				readers <- bad
				return
			default:
			}
			if g := ml.Guard(); len(g) != 1 && len(g) != 2 && bad == "" { // 1: nothing held (a nil check)
				bad = fmt.Sprintf("a partial Guard: %v", g)
			}
			if tk := ml.Tokens(); tk != nil && len(tk) != 2 && bad == "" {
				bad = fmt.Sprintf("partial Tokens: %v", tk)
			}
			_ = ml.Lost()
			time.Sleep(time.Millisecond) // pacing the reader, not a wait for a condition
		}
	}
	bs := newSession(t, c.Servers())
	rv, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/a")
	require.NoError(t, err)
	rvBreakWhileWaitingAfter(t, c, ms, root, root+"/a", ml, 2,
		func(ctx context.Context) {
			eventually(t, 10*time.Second, "the first Lock is under way", func() bool {
				return len(rvNodesOf(t, c, ms.Client().SessionID(), root)) > 0
			})
			require.ErrorIs(t, ml.Lock(ctx), zklock.ErrAlreadyLocked, "a second Lock beside the first")
			go read()
		},
		func(ctx context.Context, _ string) {
			broken, err := zklock.Break(ctx, bs, root+"/a", true)
			require.NoError(t, err)
			require.Len(t, broken, 1)
		},
		func(ctx context.Context) { require.NoError(t, rv.Lock(ctx), "the rival holds /a") },
		func(ctx context.Context) {
			require.ErrorIs(t, ml.Lock(ctx), zklock.ErrAlreadyLocked, "a second Lock while the first starts over")
			require.NoError(t, rv.Unlock(ctx))
		},
		func(ctx context.Context) {
			halt()
			require.Empty(t, <-readers)
		})
}
