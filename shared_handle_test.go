package zklock_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// exclusive is the write side of a Mutex or an RWMutex, as a test drives
// it: one handle shared by goroutines.
type exclusive interface {
	Lock(context.Context) error
	Unlock(context.Context) error
	Lost() <-chan struct{}
	Guard() *zk.CheckOp
}

// Issue 43, finding 1: two goroutines Lock one handle; the second waits in
// the handle until the first Unlocks. Its own hold, granted by the server
// meanwhile, may end while it waits (here its bound, WithMaxHold, passes
// on a healthy session while the first holder is slow), and a rival of
// another session then holds. The second Lock must not return success
// for that dead hold: it goes on waiting, and returns a live hold once the
// rival let go.
func TestSharedHandleLockAfterLoss(t *testing.T) {
	for _, tc := range []struct {
		name string
		make func(*zklock.Session, string, ...zklock.Option) (exclusive, error)
	}{
		{"Mutex", func(s *zklock.Session, p string, o ...zklock.Option) (exclusive, error) {
			return zklock.NewMutex(s, p, o...)
		}},
		{"RWMutex", func(s *zklock.Session, p string, o ...zklock.Option) (exclusive, error) {
			return zklock.NewRWMutex(s, p, o...)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := shared(t)
			ctx := ctxFor(t)
			path := lockPath(t, "lock")
			const bound = 700 * time.Millisecond
			m, err := tc.make(newSession(t, c.Servers()), path, zklock.WithMaxHold(bound))
			if err != nil {
				t.Fatal(err)
			}
			rival, err := tc.make(newSession(t, c.Servers()), path)
			if err != nil {
				t.Fatal(err)
			}
			queued := func(n int) func() bool {
				return func() bool { cs, err := zklock.ContendersOf(ctx, m); return err == nil && len(cs) == n }
			}
			if err := m.Lock(ctx); err != nil { // A, the slow first holder
				t.Fatal(err)
			}
			bgot := make(chan error, 1)
			go func() { bgot <- m.Lock(ctx) }() // B, on the same handle
			eventually(t, 10*time.Second, "B queued behind A", queued(2))
			rgot := make(chan error, 1)
			go func() { rgot <- rival.Lock(ctx) }()
			// A's bound passes (B is granted on the server, and waits for A
			// in the handle), then B's (its node goes): the rival holds.
			select {
			case err := <-rgot:
				if err != nil {
					t.Fatalf("rival's Lock: %v", err)
				}
			case err := <-bgot:
				t.Fatalf("B's Lock returned %v while A has not unlocked", err)
			case <-ctx.Done():
				t.Fatal("the rival never held")
			}
			if err := m.Unlock(ctx); !errors.Is(err, zklock.ErrLockLost) {
				t.Fatalf("A's Unlock after its bound: %v, want ErrLockLost", err)
			}
			// B returns (a violation: the rival holds), or waits in the
			// queue behind the rival.
			waits := make(chan struct{})
			stop := make(chan struct{})
			defer close(stop)
			go func() {
				for {
					if queued(2)() {
						close(waits)
						return
					}
					select {
					case <-stop:
						return
					case <-time.After(20 * time.Millisecond):
					}
				}
			}()
			select {
			case err := <-bgot:
				t.Fatalf("B's Lock returned %v while the rival %s holds (B's Lost closed: %v)", err, zklock.NodeOf(rival), isClosed(m.Lost()))
			case <-waits:
			case <-ctx.Done():
				t.Fatal("B neither returned nor waited behind the rival")
			}
			if err := rival.Unlock(ctx); err != nil {
				t.Fatalf("rival's Unlock: %v", err)
			}
			if err := <-bgot; err != nil {
				t.Fatalf("B's Lock: %v", err)
			}
			if isClosed(m.Lost()) {
				t.Fatal("B's Lock returned a hold whose Lost is closed")
			}
			if err := m.Unlock(ctx); err != nil && !errors.Is(err, zklock.ErrLockLost) {
				t.Fatalf("B's Unlock: %v", err)
			}
			eventually(t, 10*time.Second, "nothing left on the server", queued(0))
		})
	}
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Issue 43, finding 3: a TryLock of a ReentrantMutex's owner, refused
// while the owner's first Lock waits for another owner, must not make the
// owner's next Lock queue on the server behind the owner's own node (a
// deadlock: the owner unlocks only after that Lock returns). That Lock
// waits for the first, then counts.
func TestReentrantTryLockBesideWaitingLock(t *testing.T) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	s := newSession(t, c.Servers())
	other, err := zklock.NewReentrantMutex(s, path)
	if err != nil {
		t.Fatal(err)
	}
	owner, err := zklock.NewReentrantMutex(s, path)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	queued := func(n int) func() bool {
		return func() bool { cs, err := zklock.ContendersOf(ctx, owner); return err == nil && len(cs) == n }
	}
	first := make(chan error, 1)
	go func() { first <- owner.Lock(ctx) }()
	eventually(t, 10*time.Second, "the owner's first Lock waits", queued(2))
	if err := owner.TryLock(ctx); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("the owner's TryLock while another owner holds: %v, want ErrLocked", err)
	}
	// Bounded: on the old code this Lock waits behind the owner's own node
	// until its ctx ends.
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	second := make(chan error, 1)
	go func() { second <- owner.Lock(lctx) }()
	if err := other.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-first; err != nil {
		t.Fatalf("the owner's first Lock: %v", err)
	}
	if err := <-second; err != nil {
		cs, _ := zklock.ContendersOf(ctx, owner)
		t.Fatalf("the owner's second Lock: %v (queue: %d nodes)", err, len(cs))
	}
	if n := zklock.HoldCount(owner); n != 2 {
		t.Fatalf("hold count %d, want 2", n)
	}
	for range 2 {
		if err := owner.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "nothing left on the server", queued(0))
}
