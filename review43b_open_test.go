//go:build review

package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

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
	if zklock.HoldCount(owner) != 2 {
		t.Fatalf("count %d after the MultiLock's Lock, want 2", zklock.HoldCount(owner))
	}
	uerr := r.slowCut(t, ml.Unlock)
	if !errors.Is(uerr, context.DeadlineExceeded) {
		t.Fatalf("MultiLock.Unlock: %v, want the ctx's error (M cut off)", uerr)
	}
	if zklock.HoldCount(owner) != 1 {
		t.Fatalf("count %d after the MultiLock's cut-off Unlock, want 1", zklock.HoldCount(owner))
	}
	err2 := ml.Unlock(r.ctx)
	t.Logf("second MultiLock.Unlock: %v", err2)
	rgot := make(chan error, 1)
	go func() { rgot <- rival.Lock(r.ctx) }()
	select {
	case err := <-rgot:
		t.Errorf("after the MultiLock's second Unlock (%v) the rival's Lock returned %v on %s, while the owner, which locked R once and never unlocked it, has count %d (its node %s exists: %v)",
			err2, err, pb, zklock.HoldCount(owner), node, r.exists(t, node))
		if err == nil {
			mustDo(t, rival.Unlock(r.ctx))
		}
		rgot <- nil
	case <-time.After(time.Second):
	}
	if zklock.HoldCount(owner) != 1 || !r.exists(t, node) {
		t.Errorf("owner's count %d (want 1), its node %s exists %v", zklock.HoldCount(owner), node, r.exists(t, node))
	}
	for zklock.HoldCount(owner) > 0 {
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
