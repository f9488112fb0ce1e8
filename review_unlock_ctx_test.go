package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Issue 43's review: a release whose ctx ends after its delete reached the
// server (the reply comes too late) left a hold that looked live (Lost
// open, the handle still holding) while a rival of another session held.
// The contract now (internal/hold/release.go): such a release returns an
// error wrapping ctx.Err(), and the hold is over: Lost closed, the handle
// holds nothing (a second release returns its "not held" error), its node
// is deleted in the background, and the handle can lock again, with a new
// node. Every test here measures it the same way (cutRig).

// cutRig is the set-up of the tests here: the shared server; the holder's
// session s reaches it through a proxy px, the rival's rs and an
// observer's obs directly.
type cutRig struct {
	ctx        context.Context
	path       string
	px         *zktest.Proxy
	s, rs, obs *zklock.Session
}

func newCutRig(t *testing.T, name string) *cutRig {
	t.Helper()
	t.Parallel()
	srv := shared(t)
	px := zktest.NewProxy(t, srv.Servers())
	return &cutRig{ctx: ctxFor(t), path: lockPath(t, name), px: px,
		s: newSession(t, px.Addrs()), rs: newSession(t, srv.Servers()), obs: newSession(t, srv.Servers())}
}

// cut starts rivalLock (it returns once the rival holds), waits until the
// rival queues behind the holder, then runs release with a 450 ms ctx over
// a link with 300 ms of latency each way: the delete reaches the server,
// its reply comes after the ctx ended. It returns release's error once the
// rival holds, with the link fast again; it fails if the rival does not
// hold within 10 s.
func (r *cutRig) cut(t *testing.T, release, rivalLock func(context.Context) error) error {
	t.Helper()
	got := make(chan error, 1)
	go func() { got <- rivalLock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival queues behind the holder", func() bool {
		return len(ephemeralsUnder(t, r.obs.Client(), r.path)) >= 2
	})
	r.px.SetLatency(300 * time.Millisecond)
	uctx, cancel := context.WithTimeout(r.ctx, 450*time.Millisecond)
	uerr := release(uctx)
	cancel()
	t.Logf("release with a 450ms ctx over a 300ms link: %v", uerr)
	defer r.px.SetLatency(0)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("rival: %v", err)
		}
	case <-time.After(10 * time.Second):
		// Landed or not, the delete is finished in the background.
		t.Fatalf("the rival did not hold within 10s (release: %v)", uerr)
	}
	return uerr
}

// gaveUp checks the contract on the holder once the rival holds: a
// release cut off (uerr) wraps the ctx's error, Lost is closed either way,
// and none of the holder's nodes is left on the server.
func (r *cutRig) gaveUp(t *testing.T, uerr error, lost <-chan struct{}) {
	t.Helper()
	if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) {
		t.Errorf("the cut-off release returned %v, want an error wrapping the ctx's", uerr)
	}
	if !isClosed(lost) {
		t.Errorf("the rival holds; our release returned %v and our Lost is open", uerr)
	}
	eventually(t, 10*time.Second, "the holder's nodes deleted in the background", func() bool {
		return len(ephemeralsOf(t, r.obs.Client(), r.path, r.s.SessionID())) == 0
	})
}

// A Mutex holder's Unlock is cut off after its delete landed: the handle
// must not claim to hold (it did, with Lost open, before the fix), a
// second Unlock returns ErrNotLocked, and a Lock after the rival's Unlock
// holds with a new node.
func TestReviewBreak_UnlockCtxEndsAfterDelete(t *testing.T) {
	r := newCutRig(t, "lock")
	m, err := zklock.NewMutex(r.s, r.path)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewMutex(r.rs, r.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(r.ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(m.Guard())
	uerr := r.cut(t, m.Unlock, rival.Lock)
	if held := nodeOf(m.Guard()) != ""; held && !isClosed(m.Lost()) {
		t.Errorf("the rival holds %s; our handle still holds %s (Unlock returned %v) with Lost open", nodeOf(rival.Guard()), node, uerr)
	}
	r.gaveUp(t, uerr, m.Lost())
	if err := m.Unlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("second Unlock: %v, want ErrNotLocked", err)
	}
	if err := rival.Unlock(r.ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(r.ctx); err != nil {
		t.Fatal(err)
	}
	if nodeOf(m.Guard()) == node {
		t.Errorf("Lock after the cut-off Unlock holds the old node %s", node)
	}
	if err := m.Unlock(r.ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 0 })
}

// The same on a ReentrantMutex owner (count 1). Before the fix the count
// stayed 1 and the owner's next Lock re-entered, returning nil while the
// rival held. Now the count is 0, a second Unlock returns ErrNotLocked,
// and the owner's next Lock waits behind the rival, then holds with a new
// node.
func TestReviewBreak_ReentrantLockAfterUnlockCtxEnds(t *testing.T) {
	r := newCutRig(t, "lock")
	owner, err := zklock.NewReentrantMutex(r.s, r.path)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewMutex(r.rs, r.path)
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Lock(r.ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(owner.Guard())
	uerr := r.cut(t, owner.Unlock, rival.Lock)
	r.gaveUp(t, uerr, owner.Lost())
	if uerr != nil && owner.HoldCount() != 0 {
		t.Errorf("hold count %d after a cut-off Unlock, want 0", owner.HoldCount())
	}
	if err := owner.Unlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("second Unlock: %v, want ErrNotLocked", err)
	}
	lerr := make(chan error, 1)
	go func() { lerr <- owner.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the owner queues again, behind the rival", func() bool {
		return len(ephemeralsOf(t, r.obs.Client(), r.path, r.s.SessionID())) == 1
	})
	select {
	case err := <-lerr:
		_, exists, xerr := r.obs.Client().Exists(r.ctx, node)
		if xerr != nil {
			t.Fatal(xerr)
		}
		t.Fatalf("the owner's Lock returned %v while the rival %s holds (owner's node %s exists: %v, Lost closed: %v, hold count %d)",
			err, nodeOf(rival.Guard()), node, exists, isClosed(owner.Lost()), owner.HoldCount())
	default:
	}
	if err := rival.Unlock(r.ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-lerr; err != nil {
		t.Fatalf("the owner's Lock after the rival let go: %v", err)
	}
	if nodeOf(owner.Guard()) == node || owner.HoldCount() != 1 {
		t.Errorf("the owner holds %s (old node %s), count %d", nodeOf(owner.Guard()), node, owner.HoldCount())
	}
	if err := owner.Unlock(r.ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 0 })
}

// cutHolder is a holder of TestReviewBreak_ReleaseCtxEndsAfterDelete's:
// its release, its loss signal, a second release's error; and its rival's
// lock (returns once the rival holds) and unlock.
type cutHolder struct {
	release        func(context.Context) error
	lost           func() <-chan struct{}
	notHeld        error
	rival, unrival func(context.Context) error
}

// As TestReviewBreak_UnlockCtxEndsAfterDelete, for a Semaphore lease (limit
// 1, both layouts), an RWMutex's write lock, a cohort's Mutex and a
// MultiLock: once the rival holds, the holder's Lost is closed, its nodes
// go, and a second release says it holds nothing.
func TestReviewBreak_ReleaseCtxEndsAfterDelete(t *testing.T) {
	for _, tc := range []struct {
		name string
		hold func(t *testing.T, r *cutRig) cutHolder // acquires on r.s; its rival is on r.rs
	}{
		{"Semaphore", semCut()},
		{"SemaphorePermitLayout", semCut(zklock.WithPermitLayout())},
		{"RWMutex", func(t *testing.T, r *cutRig) cutHolder {
			m, rival := must2(zklock.NewRWMutex(r.s, r.path))(t), must2(zklock.NewRWMutex(r.rs, r.path))(t)
			mustDo(t, m.Lock(r.ctx))
			return cutHolder{m.Unlock, m.Lost, zklock.ErrNotLocked, rival.Lock, rival.Unlock}
		}},
		{"MutexCohort", func(t *testing.T, r *cutRig) cutHolder {
			m := must2(zklock.NewMutex(r.s, r.path, zklock.WithCohort(4, 0)))(t)
			rival := must2(zklock.NewMutex(r.rs, r.path, zklock.WithCohort(4, 0)))(t)
			mustDo(t, m.Lock(r.ctx))
			return cutHolder{m.Unlock, m.Lost, zklock.ErrNotLocked, rival.Lock, rival.Unlock}
		}},
		{"MultiLock", func(t *testing.T, r *cutRig) cutHolder {
			m, rival := must2(zklock.NewMutex(r.s, r.path))(t), must2(zklock.NewMutex(r.rs, r.path))(t)
			ml := must2(zklock.NewMultiLock(m))(t)
			mustDo(t, ml.Lock(r.ctx))
			return cutHolder{ml.Unlock, ml.Lost, zklock.ErrNotLocked, rival.Lock, rival.Unlock}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := newCutRig(t, "lock")
			h := tc.hold(t, r)
			uerr := r.cut(t, h.release, h.rival)
			r.gaveUp(t, uerr, h.lost())
			if uerr != nil {
				if err := h.release(r.ctx); !errors.Is(err, h.notHeld) {
					t.Errorf("second release: %v, want %v", err, h.notHeld)
				}
			}
			mustDo(t, h.unrival(r.ctx))
		})
	}
}

// semCut is a Semaphore (limit 1, with opts) lease holder and its rival.
func semCut(opts ...zklock.Option) func(*testing.T, *cutRig) cutHolder {
	return func(t *testing.T, r *cutRig) cutHolder {
		sem := must2(zklock.NewSemaphore(r.s, r.path, 1, opts...))(t)
		rsem := must2(zklock.NewSemaphore(r.rs, r.path, 1, opts...))(t)
		l := must2(sem.Acquire(r.ctx, 1))(t)
		var rl *zklock.Lease // the rival's, set by its acquisition before cut returns
		return cutHolder{l.Release, l.Lost, zklock.ErrNotLocked,
			func(ctx context.Context) (err error) { rl, err = rsem.Acquire(ctx, 1); return err },
			func(ctx context.Context) error { return rl.Release(ctx) }}
	}
}

// must2 returns v, failing the test on err.
func must2[T any](v T, err error) func(*testing.T) T {
	return func(t *testing.T) T {
		t.Helper()
		mustDo(t, err)
		return v
	}
}

// mustDo fails the test on err.
func mustDo(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// (Held.) A cohort (WithCohort) of two handles of one session: a's Unlock
// is cut off after the cohort's node was deleted; a rival of another
// session holds; b Locks (a local waiter) and a Unlocks again. b's Lock is
// a blocking call: it must not return nil on the cohort's deleted node
// while the rival holds.
func TestReviewCohortHandoffAfterUnlockCtxEnds(t *testing.T) {
	r := newCutRig(t, "lock")
	a := must2(zklock.NewMutex(r.s, r.path, zklock.WithCohort(4, 0)))(t)
	b := must2(zklock.NewMutex(r.s, r.path, zklock.WithCohort(4, 0)))(t)
	rival := must2(zklock.NewMutex(r.rs, r.path, zklock.WithCohort(4, 0)))(t)
	mustDo(t, a.Lock(r.ctx))
	node := nodeOf(a.Guard())
	uerr := r.cut(t, a.Unlock, rival.Lock)
	r.gaveUp(t, uerr, a.Lost())
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "b queues behind the rival", func() bool {
		return len(ephemeralsOf(t, r.obs.Client(), r.path, r.s.SessionID())) == 1
	})
	if err := a.Unlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("a's second Unlock: %v, want ErrNotLocked", err)
	}
	select {
	case err := <-bgot:
		_, exists, _ := r.obs.Client().Exists(r.ctx, nodeOf(b.Guard()))
		t.Errorf("b's Lock returned %v while the rival %s holds (b's node %s, a's was %s; exists: %v; Lost closed: %v)",
			err, nodeOf(rival.Guard()), nodeOf(b.Guard()), node, exists, isClosed(b.Lost()))
		if err == nil {
			_ = b.Unlock(r.ctx)
		}
		bgot <- err
	default:
	}
	mustDo(t, rival.Unlock(r.ctx))
	select {
	case err := <-bgot:
		if err == nil {
			mustDo(t, b.Unlock(r.ctx))
		}
	case <-time.After(10 * time.Second):
		t.Error("b never returned after the rival let go")
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 0 })
}

// (Held.) An RWMutex write Unlock is cut off after the delete landed; a
// rival writer holds; Downgrade on the handle must not return nil (it
// returns ErrNotLocked: the handle holds nothing).
func TestReviewDowngradeAfterUnlockCtxEnds(t *testing.T) {
	r := newCutRig(t, "rw")
	m := must2(zklock.NewRWMutex(r.s, r.path))(t)
	rival := must2(zklock.NewRWMutex(r.rs, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	uerr := r.cut(t, m.Unlock, rival.Lock)
	r.gaveUp(t, uerr, m.Lost())
	if err := m.Downgrade(r.ctx); err == nil {
		t.Errorf("Downgrade returned nil while the rival writer %s holds (Unlock had returned %v)", nodeOf(rival.Guard()), uerr)
		_ = m.RUnlock(r.ctx)
	} else if uerr != nil && !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("Downgrade after a cut-off Unlock: %v, want ErrNotLocked", err)
	}
	if err := m.Unlock(r.ctx); uerr != nil && !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("second Unlock: %v, want ErrNotLocked", err)
	}
	mustDo(t, rival.Unlock(r.ctx))
	eventually(t, 10*time.Second, "nothing left", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 0 })
}

// A release cut off while the link is down (the delete never reaches the
// server) leaves its delete to a goroutine of the session; the session's
// Close right after must not wait on it past its own bound nor leave it
// running (goleak checks the package), and the node goes with the session.
func TestReviewUnlockCutOffThenClose(t *testing.T) {
	r := newCutRig(t, "lock")
	m := must2(zklock.NewMutex(r.s, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	node := nodeOf(m.Guard())
	r.px.Blackhole()
	uctx, cancel := context.WithTimeout(r.ctx, 300*time.Millisecond)
	uerr := m.Unlock(uctx)
	cancel()
	if !errors.Is(uerr, context.DeadlineExceeded) || !isClosed(m.Lost()) || nodeOf(m.Guard()) != "" {
		t.Fatalf("Unlock over a dead link: %v (Lost closed %v, node %q), want the ctx's error and the hold over", uerr, isClosed(m.Lost()), nodeOf(m.Guard()))
	}
	start := time.Now()
	closed := make(chan error, 1)
	go func() { closed <- r.s.Close() }()
	select {
	case err := <-closed:
		t.Logf("Close returned %v after %v", err, time.Since(start).Round(time.Millisecond))
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return within 15s of a cut-off Unlock")
	}
	r.px.Heal()
	eventually(t, 10*time.Second, "our node goes with the session", func() bool {
		_, ok, err := r.obs.Client().Exists(r.ctx, node)
		return err == nil && !ok
	})
}
