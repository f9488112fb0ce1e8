package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// An owner of a ReentrantMutex holds; an operator Breaks the lock from
// another session (force), and a rival of a third session Locks and holds.
// The owner's next Lock (a re-entry) is a blocking call: the contract says
// it returns nil only while its node stands as its session's, never while
// a rival holds exclusively. A shared Mutex handle's Lock looks at its node
// in that case (Slot.stands); the re-entry does too (Slot.Confirm, one
// round trip) and returns ErrLockLost, the count unchanged. Before the
// fix it returned nil with the count at 2.
func TestReviewBreak_ReentrantReentryAfterBreak(t *testing.T) {
	rvReentrantAfterBreak(t, (*zklock.ReentrantMutex).Lock)
}

// TryLock of the owner: as Lock.
func TestReviewBreak_ReentrantTryLockAfterBreak(t *testing.T) {
	rvReentrantAfterBreak(t, (*zklock.ReentrantMutex).TryLock)
}

func rvReentrantAfterBreak(t *testing.T, reenter func(*zklock.ReentrantMutex, context.Context) error) {
	r := newReentrantRig(t)
	if err := reenter(r.owner, r.ctx); err != nil { // the node stands: a re-entry holds
		t.Fatalf("re-entry while the node stands: %v", err)
	}
	node := nodeOf(r.owner.Guard())
	if _, err := zklock.Break(r.ctx, r.obs, r.path, true); err != nil {
		t.Fatalf("Break: %v", err)
	}
	if err := r.rival.Lock(r.ctx); err != nil {
		t.Fatalf("rival: %v", err)
	}
	err := reenter(r.owner, r.ctx)
	_, exists, xerr := r.obs.Client().Exists(r.ctx, node)
	if xerr != nil {
		t.Fatal(xerr)
	}
	if err == nil {
		t.Errorf("the owner's re-entrant Lock returned nil while the rival %s holds (owner's node %s exists: %v, Lost closed: %v, hold count %d)",
			nodeOf(r.rival.Guard()), node, exists, isClosed(r.owner.Lost()), r.owner.HoldCount())
	} else if !errors.Is(err, zklock.ErrLockLost) || r.owner.HoldCount() != 2 {
		t.Errorf("the owner's re-entrant Lock after Break: %v with hold count %d, want ErrLockLost and 2", err, r.owner.HoldCount())
	}
	for r.owner.HoldCount() > 0 {
		if err := r.owner.Unlock(r.ctx); err != nil {
			t.Logf("owner's Unlock: %v", err)
			break
		}
	}
	if err := r.rival.Unlock(r.ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(r.ctx, r.rival); return err == nil && len(cs) == 0 })
}

// reentrantRig is the set-up of the tests here, on the shared server: an
// owner of a ReentrantMutex that holds, a rival Mutex of another session,
// and an observer's session.
type reentrantRig struct {
	ctx   context.Context
	path  string
	obs   *zklock.Session
	owner *zklock.ReentrantMutex
	rival *zklock.Mutex
}

func newReentrantRig(t *testing.T) *reentrantRig {
	t.Helper()
	t.Parallel()
	srv := shared(t)
	r := &reentrantRig{ctx: ctxFor(t), path: lockPath(t, "lock"), obs: newSession(t, srv.Servers())}
	var err error
	if r.owner, err = zklock.NewReentrantMutex(newSession(t, srv.Servers()), r.path); err != nil {
		t.Fatal(err)
	}
	if r.rival, err = zklock.NewMutex(newSession(t, srv.Servers()), r.path); err != nil {
		t.Fatal(err)
	}
	if err := r.owner.Lock(r.ctx); err != nil {
		t.Fatal(err)
	}
	return r
}
