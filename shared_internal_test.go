package zklock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
	"github.com/zklock/zklock/zk"
)

// Issue 43: one handle, several goroutines, while the hold ends. These run
// on the in-memory server, which lets a test end an epoch or pass a bound
// at the step it chooses (shared_handle_test.go has the real server's).

// sharedExcl is the exclusive side of a handle a test shares.
type sharedExcl interface {
	Lock(context.Context) error
	Unlock(context.Context) error
	Lost() <-chan struct{}
	Guard() *zk.CheckOp
}

// sharedKinds are the handles whose Lock waits in a slot, with the node
// kind of a rival of another session.
var sharedKinds = []struct {
	name, rival string
	make        func(*testing.T, *queuetest.Conn, string, ...Option) sharedExcl
}{
	{"Mutex", queue.KindLock, func(t *testing.T, c *queuetest.Conn, p string, o ...Option) sharedExcl {
		return fakeMutex(t, fakeSession(), c, p, o...)
	}},
	{"RWMutex", queue.KindWrite, func(t *testing.T, c *queuetest.Conn, p string, o ...Option) sharedExcl {
		return fakeRW(t, fakeSession(), c, p, o...)
	}},
}

// Finding 1: A holds a shared handle; B, on the same handle, is granted on
// the server and waits for A in the handle; B's hold ends (its bound
// passes, or its epoch ends) and a rival of another session holds; A
// unlocks. B's Lock must not return success for its dead hold: it waits
// behind the rival, and returns a live hold once the rival let go.
func TestSharedLockAfterLoss(t *testing.T) {
	for _, k := range sharedKinds {
		for _, how := range []string{"bound", "epoch"} {
			t.Run(k.name+"/"+how, func(t *testing.T) {
				const path = "/shared/lock"
				srv := queuetest.NewServer()
				a, r := srv.Connect(), srv.Connect()
				ctx := fakeCtx(t)
				bd := newBounds(t)
				var opts []Option
				if how == "bound" {
					opts = append(opts, WithMaxHold(time.Hour))
				}
				m := k.make(t, a, path, opts...)
				if err := m.Lock(ctx); err != nil { // A
					t.Fatal(err)
				}
				anode := NodeOf(m)
				bgot := goErr(t, func() error { return m.Lock(ctx) }) // B
				awaitFake(t, srv, "B waits for A", func() bool { return srv.Watching(anode) == 1 })
				if how == "bound" {
					bd.pass(t, 0) // A's: its node goes, B is granted
				} else {
					a.EndEpoch() // A's node goes; B enqueues again and is granted
					a.NewEpoch()
				}
				// B's node is tracked once granted, A's until its release
				// is over: one tracked node may still be A's alone (its
				// bound gives it back on a goroutine of its own). Then the
				// rival, if not seen watching B's node, may not be queued
				// yet, B's bound passes as soon as B is granted, B enqueues
				// again, and the rival waits behind B's second node, which
				// waits for A's Unlock (issue 43's make test flake).
				var bnode string
				awaitFake(t, srv, "B is granted on the server", func() bool {
					tr := a.Tracked()
					if len(tr) != 1 || tr[0] == anode || srv.Exists(anode) {
						return false
					}
					bnode = tr[0]
					return true
				})
				rch := goHeld(t, plainQ(r, path, k.rival))
				awaitFake(t, srv, "the rival waits for B", func() bool { return srv.Watching(bnode) == 1 })
				if how == "bound" {
					bd.pass(t, 1) // B's, while it waits for A
				} else {
					a.EndEpoch()
					a.NewEpoch()
				}
				rh := <-rch
				if rh == nil {
					t.Fatal("the rival did not hold once B's node went")
				}
				if err := m.Unlock(ctx); !errors.Is(err, ErrLockLost) {
					t.Fatalf("A's Unlock: %v, want ErrLockLost", err)
				}
				if err, done := eitherOr(t, srv, "B returns or waits behind the rival", bgot,
					func() bool { return srv.Watching(rh.Path) == 1 }); done {
					t.Fatalf("B's Lock returned %v while the rival %s holds (B's Lost closed: %v)", err, rh.Path, closed(m.Lost()))
				}
				if err := plainQ(r, path, k.rival).Release(ctx, rh); err != nil {
					t.Fatal(err)
				}
				if err := <-bgot; err != nil {
					t.Fatalf("B's Lock: %v", err)
				}
				if closed(m.Lost()) {
					t.Fatal("B's Lock returned a hold whose Lost is closed")
				}
				if err := m.Unlock(ctx); err != nil {
					t.Fatalf("B's Unlock: %v", err)
				}
				awaitFake(t, srv, "nothing left", func() bool { return len(srv.List(path)) == 0 })
			})
		}
	}
}

// Finding 2: an Unlock that runs while Downgrade reads the write node
// (Join's second round trip) must not announce the write node's release:
// the read node stands at its position, and the writer queued behind would
// take the announcement for its turn, beside the read hold.
func TestDowngradeRacingUnlock(t *testing.T) {
	const path = "/shared/rw"
	srv := queuetest.NewServer()
	x, a, b := srv.Connect(), srv.Connect(), srv.Connect()
	ctx := fakeCtx(t)
	// A's write hold must have waited: only such a release is announced.
	xq := plainQ(x, path, queue.KindWrite)
	xh, err := xq.Acquire(ctx, queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	am := fakeRW(t, fakeSession(), a, path)
	agot := goErr(t, func() error { return am.Lock(ctx) })
	awaitFake(t, srv, "A waits for X", func() bool { return srv.Watching(xh.Path) == 1 })
	if err := xq.Release(ctx, xh); err != nil {
		t.Fatal(err)
	}
	if err := <-agot; err != nil {
		t.Fatalf("A's Lock: %v", err)
	}
	write := NodeOf(am)
	bch := goHeld(t, plainQ(b, path, queue.KindWrite))
	awaitFake(t, srv, "B waits for A's write node", func() bool { return srv.Watching(write) == 1 })

	// The Unlock starts once Downgrade's read of the write node reached the
	// server; its delete is applied before that read's reply, and its own
	// reply waits until Downgrade returned: it is under way throughout.
	deleted, downgraded := make(chan struct{}), make(chan struct{})
	var uerr <-chan error
	a.Inject(queuetest.OpStat, queuetest.Fault{Path: write, After: func() {
		uerr = goErr(t, func() error { return am.Unlock(ctx) })
		select {
		case <-deleted:
		case <-ctx.Done():
		}
	}})
	a.Inject(queuetest.OpDelete, queuetest.Fault{Path: write, After: func() {
		close(deleted)
		select {
		case <-downgraded:
		case <-ctx.Done():
		}
	}})
	derr := am.Downgrade(ctx)
	close(downgraded)
	if uerr == nil {
		t.Fatal("Downgrade did not read the write node")
	}
	if err := <-uerr; err != nil {
		t.Fatalf("A's Unlock: %v", err)
	}
	read := readNodeOf(srv, a.SessionID(), path)
	awaitFake(t, srv, "B holds, or waits for A's read node", func() bool {
		return len(b.Tracked()) > 0 || (read != "" && srv.Watching(read) == 1)
	})
	if len(b.Tracked()) > 0 && srv.Exists(read) {
		t.Fatalf("writer B holds beside A's read node %s (Downgrade returned %v): the write node's release was announced", read, derr)
	}
	if derr != nil {
		if read != "" {
			t.Fatalf("Downgrade failed (%v) and left %s", derr, read)
		}
		if h := <-bch; h == nil {
			t.Fatal("B did not hold")
		}
		return
	}
	if err := am.RUnlock(ctx); err != nil {
		t.Fatalf("A's RUnlock: %v", err)
	}
	if h := <-bch; h == nil {
		t.Fatal("B did not hold after A's read lock")
	}
}

// Found by FuzzSharedHandles (with findings 1 and 3 fixed): B, granted on
// the server while the handle's holder A held on (A's epoch ended), waits
// for A in the handle; another client breaks B's node (Break, force) and a
// rival holds; A unlocks. B's loss signal never fires (a Break is not a
// loss), so B's Lock must look at its node before it returns: it waits
// behind the rival instead.
func TestSharedLockAfterBreak(t *testing.T) {
	for _, k := range sharedKinds {
		t.Run(k.name, func(t *testing.T) {
			const path = "/shared/lock"
			srv := queuetest.NewServer()
			a, r := srv.Connect(), srv.Connect()
			ctx := fakeCtx(t)
			m := k.make(t, a, path)
			if err := m.Lock(ctx); err != nil { // A
				t.Fatal(err)
			}
			anode := NodeOf(m)
			bgot := goErr(t, func() error { return m.Lock(ctx) }) // B
			awaitFake(t, srv, "B waits for A", func() bool { return srv.Watching(anode) == 1 })
			a.EndEpoch() // A's node goes; B enqueues again and is granted
			a.NewEpoch()
			awaitFake(t, srv, "B is granted on the server", func() bool { return len(a.Tracked()) == 1 })
			bnode := a.Tracked()[0]
			if err := srv.Connect().Delete(ctx, bnode); err != nil { // Break
				t.Fatal(err)
			}
			rch := goHeld(t, plainQ(r, path, k.rival))
			rh := <-rch
			if rh == nil {
				t.Fatal("the rival did not hold once B's node was broken")
			}
			if err := m.Unlock(ctx); !errors.Is(err, ErrLockLost) {
				t.Fatalf("A's Unlock: %v, want ErrLockLost", err)
			}
			if err, done := eitherOr(t, srv, "B returns or waits behind the rival", bgot,
				func() bool { return srv.Watching(rh.Path) == 1 }); done {
				t.Fatalf("B's Lock returned %v while the rival %s holds (B's node %s exists: %v)", err, rh.Path, bnode, srv.Exists(bnode))
			}
			if err := plainQ(r, path, k.rival).Release(ctx, rh); err != nil {
				t.Fatal(err)
			}
			if err := <-bgot; err != nil {
				t.Fatalf("B's Lock: %v", err)
			}
			if !srv.Exists(NodeOf(m)) {
				t.Fatalf("B holds %s, which does not exist", NodeOf(m))
			}
			if err := m.Unlock(ctx); err != nil {
				t.Fatalf("B's Unlock: %v", err)
			}
			awaitFake(t, srv, "nothing left", func() bool { return len(srv.List(path)) == 0 })
		})
	}
}

// A ReentrantMutex re-entry (issue 43's review) is handed out without an
// acquisition, so it looks at the owner's node: one stat while the node
// stands (nothing else is sent), and ErrLockLost, the count unchanged,
// once another client deleted it (Break), which fires no loss signal.
func TestReentryLooksAtItsNode(t *testing.T) {
	srv := queuetest.NewServer()
	a := srv.Connect()
	ctx := fakeCtx(t)
	r, err := NewReentrantMutex(&Session{opts: defaultSessionOptions(), qc: a, done: make(chan struct{})}, "/re")
	if err != nil {
		t.Fatal(err)
	}
	if err := r.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := NodeOf(r)
	stats, creates := srv.Calls(queuetest.OpStat), srv.Calls(queuetest.OpCreate)
	for _, reenter := range []func(context.Context) error{r.Lock, r.TryLock} {
		if err := reenter(ctx); err != nil {
			t.Fatalf("re-entry while the node stands: %v", err)
		}
	}
	if n, c := srv.Calls(queuetest.OpStat)-stats, srv.Calls(queuetest.OpCreate)-creates; n != 2 || c != 0 || r.holdCount() != 3 {
		t.Fatalf("two re-entries sent %d stats and %d creates (hold count %d), want 2, 0 and 3", n, c, r.holdCount())
	}
	if err := srv.Connect().Delete(ctx, node); err != nil { // Break
		t.Fatal(err)
	}
	for _, reenter := range []func(context.Context) error{r.Lock, r.TryLock} {
		if err := reenter(ctx); !errors.Is(err, ErrLockLost) || r.holdCount() != 3 {
			t.Fatalf("re-entry after Break: %v (hold count %d), want ErrLockLost and 3", err, r.holdCount())
		}
	}
	for r.holdCount() > 0 {
		if err := r.Unlock(ctx); err != nil {
			t.Fatalf("Unlock at count %d: %v", r.holdCount(), err)
		}
	}
	if n := srv.Ephemerals(a.SessionID()); len(n) > 0 {
		t.Fatalf("left %v", n)
	}
}
