package zklock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// Review 43b: attacks on the contract of a release cut off by its ctx (it
// ends the hold whatever its outcome) and of a ReentrantMutex re-entry (it
// looks at its node on the server), each through one handle shared by
// several goroutines or two features at once. Real ZooKeeper (the shared
// server); the holder's session reaches it through a proxy (cutRig).

// slowCut runs release with a 450 ms ctx over a 300 ms link (each way):
// the request reaches the server, its reply comes after the ctx ended. The
// link is fast again when it returns.
func (r *cutRig) slowCut(t *testing.T, release func(context.Context) error) error {
	t.Helper()
	r.px.SetLatency(300 * time.Millisecond)
	defer r.px.SetLatency(0)
	uctx, cancel := context.WithTimeout(r.ctx, 450*time.Millisecond)
	defer cancel()
	err := release(uctx)
	t.Logf("release with a 450ms ctx over a 300ms link: %v", err)
	return err
}

// exists reports whether node stands on the server (the observer's view).
func (r *cutRig) exists(t *testing.T, node string) bool {
	t.Helper()
	_, ok, err := r.obs.Client().Exists(r.ctx, node)
	mustDo(t, err)
	return ok
}

// nothingLeft waits until no ephemeral is left under the rig's path.
func (r *cutRig) nothingLeft(t *testing.T) {
	t.Helper()
	eventually(t, 10*time.Second, "nothing left on the server", func() bool {
		return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 0
	})
}

// One Mutex handle, two goroutines: A holds, B waits in Lock on the same
// handle (its own node, second in the queue), a rival of another session
// waits third. A's Unlock is cut off after its delete landed: B's node is
// granted by the server. B's Lock must return with B's own node (not A's
// dead one), standing, Lost open, while the rival still waits; B's Unlock
// then lets the rival hold.
func TestReviewBreak_SharedMutexWaiterAfterCutOffUnlock(t *testing.T) {
	r := newCutRig(t, "lock")
	m := must2(zklock.NewMutex(r.s, r.path))(t)
	rival := must2(zklock.NewMutex(r.rs, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	nodeA := nodeOf(m.Guard())
	bgot := make(chan error, 1)
	go func() { bgot <- m.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "B queues behind A", func() bool {
		return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2
	})
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival queues third", func() bool {
		return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 3
	})
	uerr := r.slowCut(t, m.Unlock)
	if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) {
		t.Errorf("A's cut-off Unlock: %v, want the ctx's error", uerr)
	}
	select {
	case err := <-bgot:
		mustDo(t, err)
	case err := <-rgot:
		t.Fatalf("the rival's Lock returned %v before B, which queued ahead of it", err)
	case <-time.After(15 * time.Second):
		t.Fatal("B never held after A's cut-off Unlock")
	}
	nodeB := nodeOf(m.Guard())
	if nodeB == "" || nodeB == nodeA {
		t.Fatalf("B holds %q, A held %q: want a node of B's own", nodeB, nodeA)
	}
	if !r.exists(t, nodeB) || isClosed(m.Lost()) {
		t.Fatalf("B's Lock returned nil; its node %s exists: %v, Lost closed: %v", nodeB, r.exists(t, nodeB), isClosed(m.Lost()))
	}
	eventually(t, 10*time.Second, "A's node deleted", func() bool { return !r.exists(t, nodeA) })
	select {
	case err := <-rgot:
		t.Fatalf("the rival's Lock returned %v while B holds %s", err, nodeB)
	case <-time.After(300 * time.Millisecond): // a rival wrongly granted would be by now
	}
	mustDo(t, m.Unlock(r.ctx))
	mustDo(t, <-rgot)
	mustDo(t, rival.Unlock(r.ctx))
	r.nothingLeft(t)
}

// A Mutex's Unlock is cut off while the link is down (its delete waits in
// the background); the same handle Locks again at once and the link comes
// back. The background delete of the old node must not take the new one:
// once the old node is gone the handle holds its new node, standing, the
// only one of its session, Lost open; a rival then waits behind it.
func TestReviewBreak_RelockRacesBackgroundDelete(t *testing.T) {
	rvRelock(t, func(t *testing.T, r *cutRig) relocker {
		m := must2(zklock.NewMutex(r.s, r.path))(t)
		return relocker{m.Lock, m.Unlock, func() string { return nodeOf(m.Guard()) }, m.Lost}
	})
}

// As TestReviewBreak_RelockRacesBackgroundDelete for a ReentrantMutex
// owner at count 1; the count is 1 again after the new Lock.
func TestReviewBreak_ReentrantRelockRacesBackgroundDelete(t *testing.T) {
	rvRelock(t, func(t *testing.T, r *cutRig) relocker {
		m := must2(zklock.NewReentrantMutex(r.s, r.path))(t)
		return relocker{m.Lock, m.Unlock, func() string { return nodeOf(m.Guard()) }, m.Lost}
	})
}

type relocker struct {
	lock, unlock func(context.Context) error
	node         func() string
	lost         func() <-chan struct{}
}

func rvRelock(t *testing.T, mk func(*testing.T, *cutRig) relocker) {
	r := newCutRig(t, "lock")
	m := mk(t, r)
	rival := must2(zklock.NewMutex(r.rs, r.path))(t)
	mustDo(t, m.lock(r.ctx))
	old := m.node()
	r.px.Blackhole()
	uctx, cancel := context.WithTimeout(r.ctx, 300*time.Millisecond)
	uerr := m.unlock(uctx)
	cancel()
	if !errors.Is(uerr, context.DeadlineExceeded) {
		r.px.Heal()
		t.Fatalf("Unlock over a dead link: %v, want the ctx's error", uerr)
	}
	lerr := make(chan error, 1)
	go func() { lerr <- m.lock(r.ctx) }()
	time.Sleep(200 * time.Millisecond) // the re-Lock waits for the link too (no condition to poll: the link is down)
	r.px.Heal()
	mustDo(t, <-lerr)
	nw := m.node()
	if nw == "" || nw == old {
		t.Fatalf("Lock after a cut-off Unlock holds %q (old %q), want a new node", nw, old)
	}
	eventually(t, 10*time.Second, "the old node deleted in the background", func() bool { return !r.exists(t, old) })
	if mine := ephemeralsOf(t, r.obs.Client(), r.path, r.s.SessionID()); len(mine) != 1 || mine[0] != nw {
		t.Fatalf("after the re-Lock our session owns %v, want exactly [%s]", mine, nw)
	}
	if isClosed(m.lost()) {
		t.Fatal("the new hold's Lost is closed")
	}
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	select {
	case err := <-rgot:
		t.Fatalf("the rival's Lock returned %v while we hold %s", err, nw)
	case <-time.After(500 * time.Millisecond):
	}
	mustDo(t, m.unlock(r.ctx))
	mustDo(t, <-rgot)
	mustDo(t, rival.Unlock(r.ctx))
	r.nothingLeft(t)
}

// A ReentrantMutex owner at count 2: an Unlock over a slow link with a
// short ctx only counts down (no request), so it cannot be cut off: nil,
// count 1, node standing, Lost open. The next one is cut off: the ctx's
// error, count 0, Lost closed, ErrNotLocked after.
func TestReviewBreak_ReentrantUnlockCutOffAtCountTwo(t *testing.T) {
	r := newCutRig(t, "lock")
	owner := must2(zklock.NewReentrantMutex(r.s, r.path))(t)
	mustDo(t, owner.Lock(r.ctx))
	mustDo(t, owner.Lock(r.ctx))
	node := nodeOf(owner.Guard())
	if err := r.slowCut(t, owner.Unlock); err != nil {
		t.Fatalf("Unlock at count 2 over a slow link: %v, want nil (it only counts)", err)
	}
	if owner.HoldCount() != 1 || nodeOf(owner.Guard()) != node || isClosed(owner.Lost()) || !r.exists(t, node) {
		t.Fatalf("after Unlock at count 2: count %d, node %q (was %s), Lost closed %v, exists %v",
			owner.HoldCount(), nodeOf(owner.Guard()), node, isClosed(owner.Lost()), r.exists(t, node))
	}
	uerr := r.slowCut(t, owner.Unlock)
	if !errors.Is(uerr, context.DeadlineExceeded) {
		t.Fatalf("Unlock at count 1 cut off: %v, want the ctx's error", uerr)
	}
	if owner.HoldCount() != 0 || nodeOf(owner.Guard()) != "" || !isClosed(owner.Lost()) {
		t.Fatalf("after a cut-off Unlock: count %d, node %q, Lost closed %v", owner.HoldCount(), nodeOf(owner.Guard()), isClosed(owner.Lost()))
	}
	if err := owner.Unlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("Unlock after: %v, want ErrNotLocked", err)
	}
	r.nothingLeft(t)
}

// A re-entry whose stat is cut off by its ctx (slow link): it returns the
// ctx's error, the count unchanged, the hold still live (a read that did
// not answer ends nothing); a re-entry on a fast link then counts, and
// two Unlocks release.
func TestReviewBreak_ReentryStatCutOffByCtx(t *testing.T) {
	r := newCutRig(t, "lock")
	owner := must2(zklock.NewReentrantMutex(r.s, r.path))(t)
	mustDo(t, owner.Lock(r.ctx))
	node := nodeOf(owner.Guard())
	for _, try := range []bool{false, true} {
		lock := owner.Lock
		if try {
			lock = owner.TryLock
		}
		err := r.slowCut(t, lock)
		if err == nil {
			t.Logf("re-entry (try %v) answered within 450ms over a 300ms link", try)
			mustDo(t, owner.Unlock(r.ctx))
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("re-entry (try %v) cut off: %v, want the ctx's error", try, err)
		}
		if owner.HoldCount() != 1 || nodeOf(owner.Guard()) != node || isClosed(owner.Lost()) || !r.exists(t, node) {
			t.Fatalf("after a cut-off re-entry (try %v): count %d, node %q (was %s), Lost closed %v, exists %v",
				try, owner.HoldCount(), nodeOf(owner.Guard()), node, isClosed(owner.Lost()), r.exists(t, node))
		}
	}
	mustDo(t, owner.Lock(r.ctx))
	if owner.HoldCount() != 2 {
		t.Fatalf("count %d after a re-entry, want 2", owner.HoldCount())
	}
	mustDo(t, owner.Unlock(r.ctx))
	mustDo(t, owner.Unlock(r.ctx))
	r.nothingLeft(t)
}

// Re-entries of one owner from several goroutines race a forced Break by
// an operator; a rival then holds. Every re-entry that began after Break
// returned must return ErrLockLost (never nil), the count counts exactly
// the re-entries that returned nil, and the owner's Unlocks (count-1 of
// them) then its last one leave nothing.
func TestReviewBreak_ReentryRacesBreak(t *testing.T) {
	r := newReentrantRig(t)
	const n = 8
	var (
		mu        sync.Mutex
		ok, after int
		broke     = make(chan struct{})
		wg        sync.WaitGroup
	)
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			time.Sleep(time.Duration(i) * 5 * time.Millisecond) // spread the re-entries around the Break
			began := isClosed(broke)
			err := r.owner.Lock(r.ctx)
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err == nil:
				ok++
				if began {
					after++
				}
			case !errors.Is(err, zklock.ErrLockLost):
				t.Errorf("re-entry: %v, want nil or ErrLockLost", err)
			}
		}()
	}
	time.Sleep(15 * time.Millisecond)
	if _, err := zklock.Break(r.ctx, r.obs, r.path, true); err != nil {
		t.Fatalf("Break: %v", err)
	}
	close(broke)
	wg.Wait()
	if after > 0 {
		t.Errorf("%d re-entries that began after Break returned nil", after)
	}
	if got := r.owner.HoldCount(); got != 1+ok {
		t.Errorf("hold count %d, want 1 + %d re-entries that returned nil", got, ok)
	}
	mustDo(t, r.rival.Lock(r.ctx))
	if err := r.owner.Lock(r.ctx); !errors.Is(err, zklock.ErrLockLost) {
		t.Errorf("re-entry while the rival holds: %v, want ErrLockLost", err)
	}
	for r.owner.HoldCount() > 1 {
		mustDo(t, r.owner.Unlock(r.ctx))
	}
	if err := r.owner.Unlock(r.ctx); err != nil && !errors.Is(err, zklock.ErrLockLost) {
		t.Errorf("last Unlock of a broken hold: %v", err)
	}
	if r.owner.HoldCount() != 0 {
		t.Errorf("count %d after the last Unlock", r.owner.HoldCount())
	}
	mustDo(t, r.rival.Unlock(r.ctx))
	eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(r.ctx, r.rival); return err == nil && len(cs) == 0 })
}

// A cohort (WithCohort) holder a whose Guard was asked for (so a local
// handoff writes the node's data first) Unlocks with a local waiter b of
// the same session; that write is cut off by the ctx over a slow link, so
// the place is given back in the background. A rival of another session
// queued behind holds next; b must not hold while the rival does, and
// holds a new node after the rival lets go.
func TestReviewBreak_CohortGuardedHandoffCutOff(t *testing.T) {
	rvCohortCutOff(t, zklock.WithCohort(4, 0), true)
}

// As TestReviewBreak_CohortGuardedHandoffCutOff, with no Guard taken but
// the cohort's hold bound (1ms) passed: a's Unlock gives the place back
// (no local handoff) and is cut off; b must enqueue again behind the
// rival.
func TestReviewBreak_CohortBoundPassedReleaseCutOff(t *testing.T) {
	rvCohortCutOff(t, zklock.WithCohort(4, time.Millisecond), false)
}

func rvCohortCutOff(t *testing.T, cohort zklock.Option, guard bool) {
	r := newCutRig(t, "lock")
	a := must2(zklock.NewMutex(r.s, r.path, cohort))(t)
	b := must2(zklock.NewMutex(r.s, r.path, cohort))(t)
	rival := must2(zklock.NewMutex(r.rs, r.path, cohort))(t)
	mustDo(t, a.Lock(r.ctx))
	if guard && a.Guard() == nil {
		t.Fatal("a holds and has no Guard")
	}
	node := nodeOf(a.Guard())
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(r.ctx) }()
	time.Sleep(100 * time.Millisecond) // b waits locally: no node of its own to poll for
	uerr := r.slowCut(t, a.Unlock)
	var bHeld bool
	select {
	case err := <-rgot:
		mustDo(t, err)
	case err := <-bgot:
		mustDo(t, err)
		bHeld = true
		t.Logf("a's Unlock (%v) handed over locally to b, on %s", uerr, nodeOf(b.Guard()))
	case <-time.After(15 * time.Second):
		t.Fatalf("neither the rival nor b held after a's Unlock (%v)", uerr)
	}
	if bHeld {
		// A local handoff is legitimate only with the cohort's node standing
		// and no rival holding.
		if !r.exists(t, nodeOf(b.Guard())) || isClosed(b.Lost()) {
			t.Fatalf("b holds %s after a's Unlock (%v): exists %v, Lost closed %v", nodeOf(b.Guard()), uerr, r.exists(t, nodeOf(b.Guard())), isClosed(b.Lost()))
		}
		select {
		case err := <-rgot:
			t.Fatalf("the rival's Lock returned %v while b holds %s", err, nodeOf(b.Guard()))
		case <-time.After(500 * time.Millisecond):
		}
		mustDo(t, b.Unlock(r.ctx))
		mustDo(t, <-rgot)
		mustDo(t, rival.Unlock(r.ctx))
		r.nothingLeft(t)
		return
	}
	if uerr == nil {
		t.Errorf("the rival holds and a's Unlock returned nil (no local handoff)")
	} else if !errors.Is(uerr, context.DeadlineExceeded) {
		t.Errorf("a's cut-off Unlock: %v, want the ctx's error", uerr)
	}
	select {
	case err := <-bgot:
		t.Fatalf("b's Lock returned %v while the rival %s holds (b's node %s, a's was %s)", err, nodeOf(rival.Guard()), nodeOf(b.Guard()), node)
	case <-time.After(500 * time.Millisecond):
	}
	mustDo(t, rival.Unlock(r.ctx))
	mustDo(t, <-bgot)
	if nodeOf(b.Guard()) == node || !r.exists(t, nodeOf(b.Guard())) {
		t.Fatalf("b holds %s (a's was %s), exists %v", nodeOf(b.Guard()), node, r.exists(t, nodeOf(b.Guard())))
	}
	mustDo(t, b.Unlock(r.ctx))
	r.nothingLeft(t)
}

// An Election's Resign cut off after its delete landed: the term's Lost
// is closed when Resign returns, the next candidate (another session)
// leads, a second Resign returns ErrNotLocked, and a new Campaign makes a
// new node and leads after the rival resigns.
func TestReviewBreak_ResignCutOff(t *testing.T) {
	r := newCutRig(t, "election")
	e := must2(zklock.NewElection(r.s, r.path))(t)
	re := must2(zklock.NewElection(r.rs, r.path))(t)
	term := must2(e.Campaign(r.ctx, []byte("a")))(t)
	node := nodeOf(term.Guard())
	rgot := make(chan *zklock.Term, 1)
	go func() {
		rt, err := re.Campaign(r.ctx, []byte("b"))
		if err != nil {
			t.Errorf("rival Campaign: %v", err)
		}
		rgot <- rt
	}()
	eventually(t, 10*time.Second, "the rival queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	uerr := r.slowCut(t, e.Resign)
	if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) {
		t.Errorf("cut-off Resign: %v, want the ctx's error", uerr)
	}
	if !isClosed(term.Lost()) {
		t.Errorf("Resign returned %v and the term's Lost is open", uerr)
	}
	var rt *zklock.Term
	select {
	case rt = <-rgot:
	case <-time.After(15 * time.Second):
		t.Fatal("the rival never led")
	}
	if rt == nil {
		t.FailNow()
	}
	if err := e.Resign(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("second Resign: %v, want ErrNotLocked", err)
	}
	eventually(t, 10*time.Second, "our old node deleted", func() bool { return !r.exists(t, node) })
	egot := make(chan *zklock.Term, 1)
	go func() {
		nt, err := e.Campaign(r.ctx, []byte("a2"))
		if err != nil {
			t.Errorf("Campaign again: %v", err)
		}
		egot <- nt
	}()
	select {
	case nt := <-egot:
		t.Fatalf("Campaign again led on %v while the rival leads on %s", nt, nodeOf(rt.Guard()))
	case <-time.After(500 * time.Millisecond):
	}
	mustDo(t, re.Resign(r.ctx))
	nt := <-egot
	if nt == nil {
		t.FailNow()
	}
	if nodeOf(nt.Guard()) == node || !r.exists(t, nodeOf(nt.Guard())) {
		t.Fatalf("the new term's node %s (old %s), exists %v", nodeOf(nt.Guard()), node, r.exists(t, nodeOf(nt.Guard())))
	}
	mustDo(t, e.Resign(r.ctx))
	r.nothingLeft(t)
}

// A Mutex WithMaxHold whose Unlock is cut off while its bound passes:
// whichever ends the hold, Unlock returns the ctx's error or the loss,
// Lost is closed, a second Unlock says not locked, a rival holds only
// after, and nothing is left (the bound's give-back and the background
// delete do not both leave a goroutine: goleak).
func TestReviewBreak_MaxHoldDuringCutOffUnlock(t *testing.T) {
	r := newCutRig(t, "lock")
	m := must2(zklock.NewMutex(r.s, r.path, zklock.WithMaxHold(1500*time.Millisecond)))(t)
	rival := must2(zklock.NewMutex(r.rs, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	granted := time.Now()
	lost := m.Lost()
	rgot := make(chan time.Time, 1)
	go func() {
		if err := rival.Lock(r.ctx); err != nil {
			t.Errorf("rival: %v", err)
		}
		rgot <- time.Now()
	}()
	eventually(t, 10*time.Second, "the rival queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	// The bound passes 1.5s after the grant; the cut-off Unlock's delete
	// lands ~300ms after it starts, its ctx ends at 450ms.
	time.Sleep(time.Until(granted.Add(1200 * time.Millisecond))) // the fault's moment, not a condition
	uerr := r.slowCut(t, m.Unlock)
	if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) && !errors.Is(uerr, zklock.ErrLockLost) {
		t.Errorf("Unlock: %v, want nil, the ctx's error or ErrLockLost", uerr)
	}
	if !isClosed(m.Lost()) {
		t.Errorf("Unlock returned %v and Lost is open", uerr)
	}
	var at time.Time
	select {
	case at = <-rgot:
	case <-time.After(15 * time.Second):
		t.Fatal("the rival never held")
	}
	select {
	case <-lost:
	default:
		t.Errorf("the rival held at %v and the Lost we took at Lock (a bound's own) is open", at)
	}
	if err := m.Unlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("second Unlock: %v, want ErrNotLocked", err)
	}
	mustDo(t, rival.Unlock(r.ctx))
	r.nothingLeft(t)
}

// One RWMutex handle: a goroutine Downgrades the write lock while another
// Unlocks it over a slow link with a ctx that cuts the Unlock off. A rival
// writer waits behind. Whatever the order: a Downgrade that returned nil
// holds a read node that stands, and the rival writer does not hold until
// it is released; one that failed holds nothing; no node is left.
func TestReviewBreak_DowngradeRacesCutOffUnlock(t *testing.T) {
	r := newCutRig(t, "rw")
	m := must2(zklock.NewRWMutex(r.s, r.path))(t)
	rival := must2(zklock.NewRWMutex(r.rs, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival writer queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	r.px.SetLatency(300 * time.Millisecond)
	dgot := make(chan error, 1)
	go func() { dgot <- m.Downgrade(r.ctx) }()
	time.Sleep(50 * time.Millisecond) // the Downgrade's create is out first
	uctx, cancel := context.WithTimeout(r.ctx, 450*time.Millisecond)
	uerr := m.Unlock(uctx)
	cancel()
	derr := <-dgot
	r.px.SetLatency(0)
	t.Logf("Downgrade: %v; cut-off Unlock: %v", derr, uerr)
	if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) {
		t.Errorf("Unlock: %v, want nil or the ctx's error", uerr)
	}
	if derr == nil {
		read := nodeOf(m.Guard())
		if read == "" || !r.exists(t, read) || isClosed(m.Lost()) {
			t.Fatalf("Downgrade returned nil; read node %q exists %v, Lost closed %v", read, read != "" && r.exists(t, read), isClosed(m.Lost()))
		}
		select {
		case err := <-rgot:
			t.Fatalf("the rival writer's Lock returned %v while our read lock %s holds", err, read)
		case <-time.After(700 * time.Millisecond):
		}
		mustDo(t, m.RUnlock(r.ctx))
	} else if err := m.RUnlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("RUnlock after a failed Downgrade (%v): %v, want ErrNotLocked", derr, err)
	}
	select {
	case err := <-rgot:
		mustDo(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("the rival writer never held")
	}
	mustDo(t, rival.Unlock(r.ctx))
	r.nothingLeft(t)
}

// A Session closed while a cut-off Unlock's delete is in flight on a slow
// link: Close returns (it waits for the delete's goroutine) and the node
// is gone; goleak checks the package for the goroutine.
func TestReviewBreak_CloseDuringInFlightDelete(t *testing.T) {
	r := newCutRig(t, "lock")
	m := must2(zklock.NewMutex(r.s, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	node := nodeOf(m.Guard())
	r.px.SetLatency(300 * time.Millisecond)
	uctx, cancel := context.WithTimeout(r.ctx, 100*time.Millisecond)
	uerr := m.Unlock(uctx)
	cancel()
	if !errors.Is(uerr, context.DeadlineExceeded) {
		t.Fatalf("Unlock with a 100ms ctx over a 300ms link: %v, want the ctx's error", uerr)
	}
	closed := make(chan error, 1)
	go func() { closed <- r.s.Close() }()
	select {
	case err := <-closed:
		t.Logf("Close: %v", err)
	case <-time.After(15 * time.Second):
		t.Fatal("Close did not return within 15s")
	}
	r.px.SetLatency(0)
	eventually(t, 10*time.Second, "our node gone", func() bool { return !r.exists(t, node) })
}

// A Semaphore (limit 2) shared by two goroutines: A's lease of 2 permits
// (two nodes in Curator's layout) is released with a ctx that cuts it off
// after its deletes landed; B, of the same handle, waits for 2 permits, a
// rival of another session for 1. B holds with nodes of its own, standing;
// the rival does not hold beside B; A's lease is over (Lost closed, a
// second Release says released) and nothing is left.
func TestReviewBreak_SharedSemaphoreWaiterAfterCutOffRelease(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts []zklock.Option
	}{{"Leases", nil}, {"Permits", []zklock.Option{zklock.WithPermitLayout()}}} {
		t.Run(tc.name, func(t *testing.T) {
			r := newCutRig(t, "sem")
			sem := must2(zklock.NewSemaphore(r.s, r.path, 2, tc.opts...))(t)
			rsem := must2(zklock.NewSemaphore(r.rs, r.path, 2, tc.opts...))(t)
			la := must2(sem.Acquire(r.ctx, 2))(t)
			before := len(ephemeralsUnder(t, r.obs.Client(), r.path))
			type got struct {
				l   *zklock.Lease
				err error
			}
			bgot := make(chan got, 1)
			go func() { l, err := sem.Acquire(r.ctx, 2); bgot <- got{l, err} }()
			eventually(t, 10*time.Second, "B queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) > before })
			mid := len(ephemeralsUnder(t, r.obs.Client(), r.path))
			rgot := make(chan got, 1)
			go func() { l, err := rsem.Acquire(r.ctx, 1); rgot <- got{l, err} }()
			eventually(t, 10*time.Second, "the rival queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) > mid })
			uerr := r.slowCut(t, la.Release)
			if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) {
				t.Errorf("cut-off Release: %v, want the ctx's error", uerr)
			}
			if !isClosed(la.Lost()) {
				t.Errorf("Release returned %v and A's Lost is open", uerr)
			}
			var b got
			select {
			case b = <-bgot:
				mustDo(t, b.err)
			case g := <-rgot:
				t.Fatalf("the rival acquired (%v) before B, which queued ahead", g.err)
			case <-time.After(15 * time.Second):
				t.Fatal("B never acquired")
			}
			if isClosed(b.l.Lost()) {
				t.Fatal("B's lease is lost at once")
			}
			select {
			case g := <-rgot:
				t.Fatalf("the rival acquired (%v) while B holds 2 of 2 permits", g.err)
			case <-time.After(500 * time.Millisecond):
			}
			if err := la.Release(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
				t.Errorf("second Release of A's lease: %v, want ErrNotLocked", err)
			}
			mustDo(t, b.l.Release(r.ctx))
			rv := <-rgot
			mustDo(t, rv.err)
			mustDo(t, rv.l.Release(r.ctx))
			r.nothingLeft(t)
		})
	}
}

// A Mutex's Unlock whose delete reaches the server but whose connection is
// reset before the reply (ResetAfterRequest): the release is retried over
// the new connection within its ctx. It returns nil or an error, and the
// hold is over either way: Lost closed, a second Unlock ErrNotLocked, the
// rival holds, nothing left; a new Lock gets a new node.
func TestReviewBreak_UnlockReplyLostOnReset(t *testing.T) {
	r := newCutRig(t, "lock")
	m := must2(zklock.NewMutex(r.s, r.path))(t)
	rival := must2(zklock.NewMutex(r.rs, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	node := nodeOf(m.Guard())
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	r.px.ResetAfterRequest(func(op int32) bool { return op == 2 || op == 14 })
	uctx, cancel := context.WithTimeout(r.ctx, 10*time.Second)
	uerr := m.Unlock(uctx)
	cancel()
	t.Logf("Unlock over a reset after its delete: %v", uerr)
	if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) {
		t.Errorf("Unlock: %v, want nil or the ctx's error", uerr)
	}
	if !isClosed(m.Lost()) || nodeOf(m.Guard()) != "" {
		t.Errorf("after Unlock (%v): Lost closed %v, node %q", uerr, isClosed(m.Lost()), nodeOf(m.Guard()))
	}
	select {
	case err := <-rgot:
		mustDo(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("the rival never held")
	}
	if err := m.Unlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("second Unlock: %v, want ErrNotLocked", err)
	}
	if r.exists(t, node) {
		t.Errorf("our node %s stands while the rival holds", node)
	}
	mustDo(t, rival.Unlock(r.ctx))
	mustDo(t, m.Lock(r.ctx))
	if nodeOf(m.Guard()) == node {
		t.Errorf("Lock after holds the old node %s", node)
	}
	mustDo(t, m.Unlock(r.ctx))
	r.nothingLeft(t)
}

// As TestReviewBreak_RelockRacesBackgroundDelete for a cohort's Mutex
// (WithCohort) and a cohort's ReentrantMutex: the cohort must not keep
// the dropped node for the next Lock.
func TestReviewBreak_CohortRelockRacesBackgroundDelete(t *testing.T) {
	t.Run("Mutex", func(t *testing.T) {
		rvRelock(t, func(t *testing.T, r *cutRig) relocker {
			m := must2(zklock.NewMutex(r.s, r.path, zklock.WithCohort(4, 0)))(t)
			return relocker{m.Lock, m.Unlock, func() string { return nodeOf(m.Guard()) }, m.Lost}
		})
	})
	t.Run("ReentrantMutex", func(t *testing.T) {
		rvRelock(t, func(t *testing.T, r *cutRig) relocker {
			m := must2(zklock.NewReentrantMutex(r.s, r.path, zklock.WithCohort(4, 0)))(t)
			return relocker{m.Lock, m.Unlock, func() string { return nodeOf(m.Guard()) }, m.Lost}
		})
	})
}

// A ReentrantMutex owner at count 1: one goroutine re-enters (its stat on
// a slow link) while another Unlocks with a ctx that cuts the release off.
// Whatever the order: a re-entry that returned nil holds a node that
// stands, Lost open, count 1, and a rival does not hold beside it; one
// that failed left the count at 0 (the Unlock ended the hold).
func TestReviewBreak_ReentryRacesCutOffUnlock(t *testing.T) {
	r := newCutRig(t, "lock")
	owner := must2(zklock.NewReentrantMutex(r.s, r.path))(t)
	rival := must2(zklock.NewMutex(r.rs, r.path))(t)
	mustDo(t, owner.Lock(r.ctx))
	old := nodeOf(owner.Guard())
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	r.px.SetLatency(300 * time.Millisecond)
	egot := make(chan error, 1)
	go func() { egot <- owner.Lock(r.ctx) }()
	time.Sleep(50 * time.Millisecond) // the re-entry's stat is out first
	uctx, cancel := context.WithTimeout(r.ctx, 450*time.Millisecond)
	uerr := owner.Unlock(uctx)
	cancel()
	var eerr error
	select {
	case eerr = <-egot:
	case err := <-rgot:
		mustDo(t, err)
		r.px.SetLatency(0)
		t.Logf("the rival holds %s first; the re-entry waits", nodeOf(rival.Guard()))
		// The rival holds; the re-entry must now wait behind it (or fail).
		select {
		case eerr = <-egot:
			t.Fatalf("the re-entry returned %v while the rival %s holds (count %d, node %q)", eerr, nodeOf(rival.Guard()), owner.HoldCount(), nodeOf(owner.Guard()))
		case <-time.After(500 * time.Millisecond):
		}
		mustDo(t, rival.Unlock(r.ctx))
		eerr = <-egot
		rgot <- nil
	case <-time.After(20 * time.Second):
		t.Fatal("neither the re-entry nor the rival returned")
	}
	r.px.SetLatency(0)
	t.Logf("cut-off Unlock: %v; racing re-entry: %v", uerr, eerr)
	if eerr == nil {
		nw := nodeOf(owner.Guard())
		if owner.HoldCount() != 1 || nw == "" || !r.exists(t, nw) || isClosed(owner.Lost()) {
			t.Fatalf("re-entry returned nil: count %d, node %q (old %s) exists %v, Lost closed %v",
				owner.HoldCount(), nw, old, nw != "" && r.exists(t, nw), isClosed(owner.Lost()))
		}
		if uerr != nil && nw == old {
			t.Fatalf("the Unlock was cut off (%v) and the re-entry holds the old node %s", uerr, old)
		}
		select {
		case err := <-rgot:
			if err == nil && nodeOf(rival.Guard()) != "" {
				t.Fatalf("the rival holds %s beside the owner's %s", nodeOf(rival.Guard()), nw)
			}
			rgot <- err
		case <-time.After(300 * time.Millisecond):
		}
		mustDo(t, owner.Unlock(r.ctx))
	} else if owner.HoldCount() != 0 {
		t.Errorf("re-entry failed (%v) with count %d", eerr, owner.HoldCount())
	}
	mustDo(t, <-rgot)
	if nodeOf(rival.Guard()) != "" {
		mustDo(t, rival.Unlock(r.ctx))
	}
	r.nothingLeft(t)
}

// A cohort ReentrantMutex (WithCohort) owner whose cohort node is broken
// (forced Break): its re-entry looks at the cohort's node and returns
// ErrLockLost, without counting, while a rival holds.
func TestReviewBreak_CohortReentryAfterBreak(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx, path := ctxFor(t), lockPath(t, "lock")
	obs := newSession(t, srv.Servers())
	owner := must2(zklock.NewReentrantMutex(newSession(t, srv.Servers()), path, zklock.WithCohort(4, 0)))(t)
	rival := must2(zklock.NewMutex(newSession(t, srv.Servers()), path, zklock.WithCohort(4, 0)))(t)
	mustDo(t, owner.Lock(ctx))
	node := nodeOf(owner.Guard())
	if _, err := zklock.Break(ctx, obs, path, true); err != nil {
		t.Fatalf("Break: %v", err)
	}
	mustDo(t, rival.Lock(ctx))
	err := owner.Lock(ctx)
	if err == nil || !errors.Is(err, zklock.ErrLockLost) || owner.HoldCount() != 1 {
		t.Errorf("cohort owner's re-entry after Break while the rival %s holds: %v, count %d (node %s)", nodeOf(rival.Guard()), err, owner.HoldCount(), node)
	}
	for owner.HoldCount() > 0 {
		if err := owner.Unlock(ctx); err != nil {
			t.Logf("owner's Unlock: %v", err)
			break
		}
	}
	mustDo(t, rival.Unlock(ctx))
	eventually(t, 10*time.Second, "nothing left", func() bool { return len(ephemeralsUnder(t, obs.Client(), path)) == 0 })
}

// A Mutex holder that waited for its turn releases with the announcing
// multi (set data, then delete); that release is cut off while the link
// is down, so its node goes by the background's plain delete, with no
// announcement. The waiter behind (another session) must still hold,
// and only once the node is gone.
func TestReviewBreak_AnnouncingReleaseCutOffWaiterWakes(t *testing.T) {
	r := newCutRig(t, "lock")
	m := must2(zklock.NewMutex(r.s, r.path))(t)
	first := must2(zklock.NewMutex(r.rs, r.path))(t)
	waiter := must2(zklock.NewMutex(newSession(t, shared(t).Servers()), r.path))(t)
	mustDo(t, first.Lock(r.ctx))
	mgot := make(chan error, 1)
	go func() { mgot <- m.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "m queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	mustDo(t, first.Unlock(r.ctx))
	mustDo(t, <-mgot) // m waited: its release announces
	node := nodeOf(m.Guard())
	wgot := make(chan error, 1)
	go func() { wgot <- waiter.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the waiter queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	r.px.Blackhole()
	uctx, cancel := context.WithTimeout(r.ctx, 300*time.Millisecond)
	uerr := m.Unlock(uctx)
	cancel()
	if !errors.Is(uerr, context.DeadlineExceeded) || !isClosed(m.Lost()) {
		r.px.Heal()
		t.Fatalf("Unlock over a dead link: %v (Lost closed %v), want the ctx's error and Lost closed", uerr, isClosed(m.Lost()))
	}
	select {
	case err := <-wgot:
		t.Fatalf("the waiter's Lock returned %v while our node %s stands (link down)", err, node)
	case <-time.After(300 * time.Millisecond):
	}
	r.px.Heal()
	select {
	case err := <-wgot:
		mustDo(t, err)
	case <-time.After(15 * time.Second):
		t.Fatalf("the waiter never held after our node's background delete (node %s exists: %v)", node, r.exists(t, node))
	}
	if r.exists(t, node) {
		t.Errorf("the waiter holds and our node %s stands", node)
	}
	mustDo(t, waiter.Unlock(r.ctx))
	r.nothingLeft(t)
}

// A Mutex's Unlock is cut off while the link is down, and the link stays
// down past the session's expiry: the background delete must end (the
// node went with the expired session) rather than delete anything of the
// next session, the handle's next Lock holds a new node under the new
// session, and Close leaves no goroutine (goleak).
func TestReviewBreak_CutOffUnlockThenExpiry(t *testing.T) {
	r := newCutRig(t, "lock")
	m := must2(zklock.NewMutex(r.s, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	node, sid := nodeOf(m.Guard()), r.s.SessionID()
	r.px.Blackhole()
	uctx, cancel := context.WithTimeout(r.ctx, 300*time.Millisecond)
	uerr := m.Unlock(uctx)
	cancel()
	if !errors.Is(uerr, context.DeadlineExceeded) {
		r.px.Heal()
		t.Fatalf("Unlock over a dead link: %v, want the ctx's error", uerr)
	}
	eventually(t, 15*time.Second, "the server expires our session (its node goes)", func() bool { return !r.exists(t, node) })
	r.px.Heal()
	mustDo(t, m.Lock(r.ctx))
	nw := nodeOf(m.Guard())
	if nw == node {
		t.Fatalf("Lock after expiry holds the old node %s", node)
	}
	t.Logf("after expiry: node %s (old %s), session %x (old %x)", nw, node, r.s.SessionID(), sid)
	if !r.exists(t, nw) || isClosed(m.Lost()) {
		t.Fatalf("Lock after expiry returned nil: node %s exists %v, Lost closed %v", nw, r.exists(t, nw), isClosed(m.Lost()))
	}
	time.Sleep(500 * time.Millisecond) // give a stray background delete its chance at the new node
	if !r.exists(t, nw) || isClosed(m.Lost()) {
		t.Fatalf("our new node %s went under us (exists %v, Lost closed %v)", nw, r.exists(t, nw), isClosed(m.Lost()))
	}
	mustDo(t, m.Unlock(r.ctx))
	r.nothingLeft(t)
}

// An RWMutex holder downgrades (write + read held), then its write Unlock
// is cut off after the delete landed. The read lock stays held: its node
// stands, Lost (the read's now) open, and the rival writer queued behind
// must not hold until RUnlock.
func TestReviewBreak_WriteUnlockCutOffAfterDowngrade(t *testing.T) {
	r := newCutRig(t, "rw")
	m := must2(zklock.NewRWMutex(r.s, r.path))(t)
	rival := must2(zklock.NewRWMutex(r.rs, r.path))(t)
	mustDo(t, m.Lock(r.ctx))
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival writer queues", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), r.path)) == 2 })
	mustDo(t, m.Downgrade(r.ctx))
	uerr := r.slowCut(t, m.Unlock)
	if uerr != nil && !errors.Is(uerr, context.DeadlineExceeded) {
		t.Errorf("write Unlock: %v, want nil or the ctx's error", uerr)
	}
	read := nodeOf(m.Guard())
	if read == "" || !r.exists(t, read) || isClosed(m.Lost()) {
		t.Fatalf("after the write Unlock (%v) the read lock: node %q exists %v, Lost closed %v", uerr, read, read != "" && r.exists(t, read), isClosed(m.Lost()))
	}
	select {
	case err := <-rgot:
		t.Fatalf("the rival writer's Lock returned %v while our read lock %s holds", err, read)
	case <-time.After(time.Second):
	}
	if err := m.Unlock(r.ctx); !errors.Is(err, zklock.ErrNotLocked) {
		t.Errorf("second write Unlock: %v, want ErrNotLocked", err)
	}
	mustDo(t, m.RUnlock(r.ctx))
	select {
	case err := <-rgot:
		mustDo(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("the rival writer never held")
	}
	mustDo(t, rival.Unlock(r.ctx))
	r.nothingLeft(t)
}

// A MultiLock of two parts: "b" through the holder's proxied session (its
// release comes first: reverse path order) and "a" on a direct session.
// Unlock is cut off during b's release (its delete lands, the reply comes
// late); a's release never begins, so the MultiLock still holds a. The
// claim: Lost closes. The channel a worker took from Lost while holding
// (the documented use: select on it while acting on every part) must close
// too, since the MultiLock still holds a and b may be a rival's by now.
func TestReviewBreak_MultiLockCapturedLostAfterPartialCutOff(t *testing.T) {
	r := newCutRig(t, "root")
	sa := newSession(t, shared(t).Servers())
	pa, pb := r.path+"/a", r.path+"/b"
	ma := must2(zklock.NewMutex(sa, pa))(t)
	mb := must2(zklock.NewMutex(r.s, pb))(t)
	rival := must2(zklock.NewMutex(r.rs, pb))(t)
	ml := must2(zklock.NewMultiLock(ma, mb))(t)
	mustDo(t, ml.Lock(r.ctx))
	lost := ml.Lost() // the worker's: taken while every part is held
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	eventually(t, 10*time.Second, "the rival queues on b", func() bool { return len(ephemeralsUnder(t, r.obs.Client(), pb)) == 2 })
	uerr := r.slowCut(t, ml.Unlock)
	if !errors.Is(uerr, context.DeadlineExceeded) {
		t.Fatalf("MultiLock.Unlock: %v, want the ctx's error", uerr)
	}
	select {
	case err := <-rgot:
		mustDo(t, err)
	case <-time.After(15 * time.Second):
		t.Fatal("the rival never held b")
	}
	if !isClosed(ml.Lost()) {
		t.Errorf("ml.Lost() is open after a cut-off Unlock")
	}
	if nodeOf(ma.Guard()) == "" || !r.exists(t, nodeOf(ma.Guard())) {
		t.Errorf("part a, whose release never began, is not held (node %q)", nodeOf(ma.Guard()))
	}
	select {
	case <-lost:
	case <-time.After(time.Second):
		t.Errorf("the rival holds b (%s), the MultiLock still holds a (%s), and the Lost channel taken while holding is still open 1s after Unlock returned %v",
			nodeOf(rival.Guard()), nodeOf(ma.Guard()), uerr)
	}
	if err := ml.Unlock(r.ctx); err != nil {
		t.Errorf("second Unlock: %v", err)
	}
	mustDo(t, rival.Unlock(r.ctx))
	r.nothingLeft(t)
}

// An owner of a ReentrantMutex R holds it (count 1) and puts R in a
// MultiLock beside a Mutex M: the MultiLock's Lock re-enters R (count 2).
// The MultiLock's Unlock goes in reverse path order: R (path "b") counts
// down to 1 (no request), then M's release (path "a", a slow link) is cut
// off by ctx. M is over; R's part was released (counted down) already.
// The claim: a second Unlock releases the parts whose release had not
// begun, here none. If it unlocks R again, the count drops to 0 and the
// owner's own hold (which it never unlocked) is released under it.
func TestReviewBreak_MultiLockSecondUnlockReleasesReentrantAgain(t *testing.T) {
	r := newCutRig(t, "root")
	so := newSession(t, shared(t).Servers())
	pa, pb := r.path+"/a", r.path+"/b"
	m := must2(zklock.NewMutex(r.s, pa))(t)
	owner := must2(zklock.NewReentrantMutex(so, pb))(t)
	rival := must2(zklock.NewMutex(r.rs, pb))(t)
	mustDo(t, owner.Lock(r.ctx))
	node := nodeOf(owner.Guard())
	ml := must2(zklock.NewMultiLock(owner, m))(t)
	mustDo(t, ml.Lock(r.ctx))
	if owner.HoldCount() != 2 {
		t.Fatalf("count %d after the MultiLock's Lock, want 2", owner.HoldCount())
	}
	lost := ml.Lost() // taken while every part is held
	uerr := r.slowCut(t, ml.Unlock)
	if !errors.Is(uerr, context.DeadlineExceeded) {
		t.Fatalf("MultiLock.Unlock: %v, want the ctx's error (M cut off)", uerr)
	}
	if owner.HoldCount() != 1 {
		t.Fatalf("count %d after the MultiLock's cut-off Unlock, want 1", owner.HoldCount())
	}
	if !isClosed(lost) {
		t.Errorf("every part's release ended (R counted down, M cut off), but the Lost channel taken while holding is open")
	}
	err2 := ml.Unlock(r.ctx)
	t.Logf("second MultiLock.Unlock: %v", err2)
	if !errors.Is(err2, zklock.ErrNotLocked) {
		t.Errorf("second MultiLock.Unlock: %v, want ErrNotLocked (every part's release ended in the first)", err2)
	}
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	select {
	case err := <-rgot:
		t.Errorf("after the MultiLock's second Unlock (%v) the rival's Lock returned %v on %s, while the owner, which locked R once and never unlocked it, has count %d (its node %s exists: %v)",
			err2, err, pb, owner.HoldCount(), node, r.exists(t, node))
		if err == nil {
			mustDo(t, rival.Unlock(r.ctx))
		}
		rgot <- nil
	case <-time.After(time.Second):
	}
	if owner.HoldCount() != 1 || !r.exists(t, node) {
		t.Errorf("owner's count %d (want 1), its node %s exists %v", owner.HoldCount(), node, r.exists(t, node))
	}
	for owner.HoldCount() > 0 {
		mustDo(t, owner.Unlock(r.ctx))
	}
	if err := <-rgot; err != nil {
		t.Fatal(err)
	}
	if nodeOf(rival.Guard()) != "" {
		mustDo(t, rival.Unlock(r.ctx))
	}
	r.nothingLeft(t)
}
