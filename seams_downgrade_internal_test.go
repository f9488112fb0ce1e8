package zklock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// readNodeOf returns the read node session sid holds under path, or "".
func readNodeOf(s *queuetest.Server, sid int64, path string) string {
	for _, p := range s.Ephemerals(sid) {
		if strings.HasPrefix(p, path+"/") && strings.Contains(p, queue.KindRead) {
			return p
		}
	}
	return ""
}

// Finding 1 of issue 34: the bound of a write hold that waited, passing
// after the holder downgraded, must not announce the write node's release:
// the read node beside it still blocks the writer queued behind, which
// would take the announcement for proof that it holds.
func TestMaxHoldBesideDowngrade(t *testing.T) {
	const path = "/seams/rw"
	srv := queuetest.NewServer()
	x, a, b := srv.Connect(), srv.Connect(), srv.Connect()
	ctx := fakeCtx(t)
	xq := plainQ(x, path, queue.KindWrite)
	xh, err := xq.Acquire(ctx, queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	bd := newBounds(t)
	am := fakeRW(t, fakeSession(), a, path, WithMaxHold(time.Hour))
	agot := goErr(t, func() error { return am.Lock(ctx) })
	awaitFake(t, srv, "A waits for X", func() bool { return srv.Watching(xh.Path) == 1 })
	if err := xq.Release(ctx, xh); err != nil {
		t.Fatal(err)
	}
	if err := <-agot; err != nil {
		t.Fatalf("A's Lock: %v", err)
	}
	write := nodeOf(am.Guard())
	bd.started(t, 1) // the write hold's bound is timer 0
	bch := goHeld(t, plainQ(b, path, queue.KindWrite))
	awaitFake(t, srv, "B waits for A's write node", func() bool { return srv.Watching(write) == 1 })
	if err := am.Downgrade(ctx); err != nil {
		t.Fatalf("A's downgrade: %v", err)
	}
	read := readNodeOf(srv, a.SessionID(), path)

	bd.pass(t, 0) // the write hold's bound
	select {
	case <-am.Lost():
	case <-ctx.Done():
		t.Fatal("the write hold's Lost did not fire at its bound")
	}
	awaitFake(t, srv, "A's write node is released", func() bool { return !srv.Exists(write) })
	awaitFake(t, srv, "B holds, or waits for A's read node", func() bool {
		return len(b.Tracked()) > 0 || srv.Watching(read) == 1
	})
	if len(b.Tracked()) > 0 && srv.Exists(read) {
		t.Fatalf("writer B holds beside A's read lock %s: the write node's release at its bound was announced", read)
	}
	if err := am.Unlock(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("A's Unlock after the bound: %v, want ErrLockLost", err)
	}
	readLost := am.Lost()
	// The read lock taken by downgrading inherits the write lock's bound:
	// it ends with it (its own timer, started at the downgrade).
	bd.pass(t, 1)
	select {
	case <-readLost:
	case <-ctx.Done():
		t.Fatal("the downgraded read hold's Lost did not fire at the write hold's bound")
	}
	if h := <-bch; h == nil || srv.Exists(read) {
		t.Fatalf("B: %v; A's read node exists: %v", h, srv.Exists(read))
	}
	if err := am.RUnlock(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("A's RUnlock after the bound: %v, want ErrLockLost", err)
	}
	if n := srv.Ephemerals(a.SessionID()); len(n) > 0 {
		t.Fatalf("A left %v", n)
	}
}

// Finding 2 of issue 34: a downgrade relies on the write hold it joins, so
// it fails, leaving no read node, once that hold was lost: its bound
// passed, or its node was deleted by another client (Break), and a writer
// queued behind it may hold.
func TestDowngradeAfterLoss(t *testing.T) {
	for _, tc := range []struct {
		name string
		opts func(*bounds) []Option
		lose func(t *testing.T, srv *queuetest.Server, bd *bounds, m *RWMutex)
	}{
		{"bound passed", func(bd *bounds) []Option { return []Option{WithMaxHold(time.Hour)} },
			func(t *testing.T, _ *queuetest.Server, bd *bounds, m *RWMutex) {
				lost := m.Lost()
				bd.pass(t, 0)
				<-lost
			}},
		{"epoch ended", func(*bounds) []Option { return nil },
			func(t *testing.T, _ *queuetest.Server, _ *bounds, m *RWMutex) {
				m.q.Conn.(*queuetest.Conn).EndEpoch() // its tracked nodes go, as the session's cleanup does
			}},
		{"node deleted", func(*bounds) []Option { return nil },
			func(t *testing.T, srv *queuetest.Server, _ *bounds, m *RWMutex) {
				if err := srv.Connect().Delete(t.Context(), nodeOf(m.Guard())); err != nil { // Break
					t.Fatal(err)
				}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const path = "/seams/rw"
			srv := queuetest.NewServer()
			a, b := srv.Connect(), srv.Connect()
			ctx := fakeCtx(t)
			bd := newBounds(t)
			am := fakeRW(t, fakeSession(), a, path, tc.opts(bd)...)
			if err := am.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			write := nodeOf(am.Guard())
			bch := goHeld(t, plainQ(b, path, queue.KindWrite))
			awaitFake(t, srv, "B waits for A's write node", func() bool { return srv.Watching(write) == 1 })
			tc.lose(t, srv, bd, am)
			if h := <-bch; h == nil {
				t.Fatal("B did not hold once A's write node went")
			}
			err := am.Downgrade(ctx)
			if read := readNodeOf(srv, a.SessionID(), path); err == nil || read != "" {
				t.Fatalf("Downgrade after the write hold was lost: %v; read node %q, ahead of writer B, which holds", err, read)
			}
			if !errors.Is(err, ErrLockLost) {
				t.Fatalf("Downgrade after the write hold was lost: %v, want ErrLockLost", err)
			}
			if err := am.Unlock(ctx); err != nil && !errors.Is(err, ErrLockLost) {
				t.Fatalf("Unlock: %v", err)
			}
		})
	}
}

// A downgraded read hold is a revocable hold like any other: its node
// carries the revocable tag (a revoker can tell), and a revocation written
// into it closes Revoked.
func TestDowngradedReadRevocable(t *testing.T) {
	const path = "/seams/rw"
	srv := queuetest.NewServer()
	a := srv.Connect()
	ctx := fakeCtx(t)
	am := fakeRW(t, fakeSession(), a, path, WithRevocable(), WithData([]byte("me")))
	if err := am.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := am.Downgrade(ctx); err != nil {
		t.Fatal(err)
	}
	if err := am.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	read := nodeOf(am.Guard())
	if data, _, _ := srv.Node(read); string(data) != "me"+queue.RevocableTag {
		t.Fatalf("the downgraded read node's data is %q, want the revocable tag after the caller's", data)
	}
	revoked := am.Revoked()
	if revoked == nil {
		t.Fatal("the downgraded read hold has no revocation signal")
	}
	if err := srv.SetData(read, []byte(revokeMessage)); err != nil {
		t.Fatal(err)
	}
	select {
	case <-revoked:
	case <-ctx.Done():
		t.Fatal("a revocation written into the downgraded read node was not heard")
	}
	if err := am.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// An RWMutex hold whose loss signal fired is released as lost, once: its
// release returns ErrLockLost and counts it released, a second one finds
// nothing held.
func TestRWMutexReleaseAfterLoss(t *testing.T) {
	for _, write := range []bool{true, false} {
		name := map[bool]string{true: "Lock", false: "RLock"}[write]
		t.Run(name, func(t *testing.T) {
			srv := queuetest.NewServer()
			a := srv.Connect()
			ctx := fakeCtx(t)
			am := fakeRW(t, fakeSession(), a, "/seams/rw")
			lock, unlock := am.RLock, am.RUnlock
			if write {
				lock, unlock = am.Lock, am.Unlock
			}
			if err := lock(ctx); err != nil {
				t.Fatal(err)
			}
			a.EndEpoch()
			if !closed(am.Lost()) {
				t.Fatal("Lost open after the epoch ended")
			}
			if err := unlock(ctx); !errors.Is(err, ErrLockLost) {
				t.Fatalf("the one release: %v, want ErrLockLost", err)
			}
			if err := unlock(ctx); !errors.Is(err, ErrNotLocked) {
				t.Fatalf("a second release: %v, want ErrNotLocked", err)
			}
		})
	}
}

// With WithMaxHold the hold's loss signal is its own channel, closed by the
// bound's goroutine; Lost asked after the epoch ended is closed at once all
// the same, not one goroutine wake-up later.
func TestMaxHoldLostAtEpochEnd(t *testing.T) {
	srv := queuetest.NewServer()
	a := srv.Connect()
	ctx := fakeCtx(t)
	newBounds(t) // the bounds never pass
	m := fakeMutex(t, fakeSession(), a, "/seams/m", WithMaxHold(time.Hour))
	rw := fakeRW(t, fakeSession(), a, "/seams/rw", WithMaxHold(time.Hour))
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := rw.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	a.EndEpoch()
	if !closed(m.Lost()) || !closed(rw.Lost()) {
		t.Fatalf("Lost asked after the epoch ended is open (Mutex closed: %v, RWMutex closed: %v)",
			closed(m.Lost()), closed(rw.Lost()))
	}
	for _, err := range []error{m.Unlock(ctx), rw.RUnlock(ctx)} {
		if !errors.Is(err, ErrLockLost) {
			t.Fatalf("release after the epoch ended: %v, want ErrLockLost", err)
		}
	}
	if n := slices.Clone(srv.Ephemerals(a.SessionID())); len(n) > 0 {
		t.Fatalf("left %v", n)
	}
}

// An Unlock whose ctx ends while its delete is out cannot know whether the
// delete landed: if it did, a rival may hold by now. So the hold is over
// whatever the server did (internal/hold/release.go): Unlock returns ctx's
// error, the handle holds nothing, Lost is closed and the layers (the
// bound, the revocation watch) are stopped, the node is deleted in the
// background, a second Unlock returns ErrNotLocked, and the handle can
// Lock again, with a new node. Both outcomes of the delete: lost on the
// way (the node stands until the background delete), and applied with
// its reply lost.
func TestCancelledUnlockGivesUp(t *testing.T) {
	for _, applied := range []bool{false, true} {
		t.Run(fmt.Sprintf("applied=%v", applied), func(t *testing.T) {
			srv := queuetest.NewServer()
			a := srv.Connect()
			ctx := fakeCtx(t)
			newBounds(t) // the bound never passes
			m := fakeMutex(t, fakeSession(), a, "/seams/m", WithMaxHold(time.Hour), WithRevocable())
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			node := nodeOf(m.Guard())
			uctx, cancel := context.WithCancel(ctx)
			f := queuetest.Fault{Before: cancel, Lost: true, Hang: true}
			if applied {
				f = queuetest.Fault{After: cancel, Hang: true}
			}
			a.Inject(queuetest.OpDelete, f)
			if err := m.Unlock(uctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("Unlock cut off: %v, want context.Canceled", err)
			}
			if nodeOf(m.Guard()) != "" || !closed(m.Lost()) || m.Revoked() != nil {
				t.Fatalf("the hold was kept: handle's node %q, Lost closed %v, Revoked %v", nodeOf(m.Guard()), closed(m.Lost()), m.Revoked())
			}
			awaitFake(t, srv, "the node is deleted in the background", func() bool { return !srv.Exists(node) })
			if err := m.Unlock(ctx); !errors.Is(err, ErrNotLocked) {
				t.Fatalf("second Unlock: %v, want ErrNotLocked", err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if nodeOf(m.Guard()) == node || !srv.Exists(nodeOf(m.Guard())) {
				t.Fatalf("Lock after the cut-off Unlock holds %q (the old node %q)", nodeOf(m.Guard()), node)
			}
			if err := m.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			if n := srv.Ephemerals(a.SessionID()); len(n) > 0 {
				t.Fatalf("left %v", n)
			}
		})
	}
}

// A downgrade cancelled while its read node is being made returns ctx's
// error and leaves no read node; the write lock stays held, and live.
func TestDowngradeCancelled(t *testing.T) {
	const path = "/seams/rw"
	srv := queuetest.NewServer()
	a := srv.Connect()
	ctx := fakeCtx(t)
	am := fakeRW(t, fakeSession(), a, path, WithMaxHold(time.Hour))
	if err := am.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	for _, op := range []queuetest.Op{queuetest.OpCreate, queuetest.OpStat} { // the read node's create, the write node's read
		rctx, cancel := context.WithCancel(ctx)
		a.Inject(op, queuetest.Fault{Before: cancel, Hang: true})
		if err := am.Downgrade(rctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("%s cut off: Downgrade %v, want context.Canceled", op, err)
		}
		if read := readNodeOf(srv, a.SessionID(), path); read != "" {
			t.Fatalf("%s cut off: the cancelled downgrade left %s", op, read)
		}
		if closed(am.Lost()) || !srv.Exists(nodeOf(am.Guard())) {
			t.Fatalf("%s cut off: the write lock was not kept", op)
		}
	}
	if err := am.Downgrade(ctx); err != nil {
		t.Fatalf("a downgrade after the cancelled ones: %v", err)
	}
	if err := am.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := am.RUnlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Ephemerals(a.SessionID()); len(n) > 0 {
		t.Fatalf("left %v", n)
	}
}
