//go:build review

package zklock_test

import (
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// An owner of a ReentrantMutex holds; an operator Breaks the lock from
// another session (force), and a rival of a third session Locks and holds.
// The owner's next Lock (a re-entry) is a blocking call: the contract says
// it returns nil only while its node stands as its session's, never while
// a rival holds exclusively. A shared Mutex handle's Lock looks at its node
// in that case (Slot.stands); here the re-entry is measured the same way.
func TestReviewBreak_ReentrantReentryAfterBreak(t *testing.T) { rvReentrantAfterBreak(t, false) }

// TryLock of the owner: as Lock.
func TestReviewBreak_ReentrantTryLockAfterBreak(t *testing.T) { rvReentrantAfterBreak(t, true) }

func rvReentrantAfterBreak(t *testing.T, try bool) {
	srv := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	s := newSession(t, srv.Servers())
	obs := newSession(t, srv.Servers())
	rs := newSession(t, srv.Servers())
	owner, err := zklock.NewReentrantMutex(s, path)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewMutex(rs, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(owner.Guard())
	if _, err := zklock.Break(ctx, obs, path, true); err != nil {
		t.Fatalf("Break: %v", err)
	}
	if err := rival.Lock(ctx); err != nil {
		t.Fatalf("rival: %v", err)
	}
	defer func() { _ = rival.Unlock(ctx) }()
	if try {
		err = owner.TryLock(ctx)
	} else {
		err = owner.Lock(ctx)
	}
	_, exists, xerr := obs.Client().Exists(ctx, node)
	if xerr != nil {
		t.Fatal(xerr)
	}
	lost := isClosed(owner.Lost())
	if err == nil {
		t.Errorf("the owner's re-entrant Lock (TryLock: %v) returned nil while the rival %s holds (owner's node %s exists: %v, Lost closed: %v, hold count %d)",
			try, nodeOf(rival.Guard()), node, exists, lost, owner.HoldCount())
	} else {
		t.Logf("the owner's re-entrant Lock: %v", err)
	}
	for owner.HoldCount() > 0 {
		if err := owner.Unlock(ctx); err != nil {
			t.Logf("owner's Unlock: %v", err)
			break
		}
	}
	_ = rival.Unlock(ctx)
	eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 0 })
}
