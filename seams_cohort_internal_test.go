package zklock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// Finding 4 of issue 34: a cohort must not hand on a node that another
// client deleted (Break, force): a rival holds now. Its local waiters
// enqueue again instead, as after a loss, and the holder's Unlock reports
// the loss.
func TestCohortAfterNodeDeleted(t *testing.T) {
	const path = "/seams/m"
	srv := queuetest.NewServer()
	a, r := srv.Connect(), srv.Connect()
	ctx := fakeCtx(t)
	fs := fakeSession()
	m1 := fakeMutex(t, fs, a, path, WithCohort(0, time.Hour))
	m2 := fakeMutex(t, fs, a, path, WithCohort(0, time.Hour))
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node, token := nodeOf(m1.Guard()), m1.Token()
	m2got := goErr(t, func() error { return m2.Lock(ctx) })
	poll(t, "m2 waits in the cohort", func() bool { return CohortWaiters(fs, path) == 1 })
	rq := plainQ(r, path, queue.KindLock)
	rch := goHeld(t, rq)
	awaitFake(t, srv, "R waits for the cohort's node", func() bool { return watchesSet(srv, r, node) == 1 })
	if err := srv.Connect().Delete(ctx, node); err != nil { // Break, force
		t.Fatal(err)
	}
	rh := <-rch
	if rh == nil {
		t.Fatal("R did not hold once the cohort's node was deleted")
	}
	// A cohort that watches its node enqueues again for m2 once it sees it
	// deleted. Give it the time (a bound, not an assertion: the assertion
	// below is on what m1's Unlock hands on).
	_ = srv.Await(fakeCtxFor(t, 2*time.Second), func() bool { return len(srv.Ephemerals(a.SessionID())) == 1 })
	uerr := m1.Unlock(ctx)
	if err, returned := eitherOr(t, srv, "m2 returns or waits for R", m2got,
		func() bool { return srv.Watching(rh.Path) == 1 }); returned {
		t.Fatalf("local waiter m2: Lock returned %v (Lost closed: %v) while rival R holds; m1's Unlock: %v",
			err, closed(m2.Lost()), uerr)
	}
	if !errors.Is(uerr, ErrLockLost) {
		t.Fatalf("m1's Unlock of a deleted node: %v, want ErrLockLost", uerr)
	}
	if err := rq.Release(ctx, rh); err != nil {
		t.Fatal(err)
	}
	if err := <-m2got; err != nil {
		t.Fatal(err)
	}
	if nodeOf(m2.Guard()) == node || m2.Token() <= token || closed(m2.Lost()) {
		t.Fatalf("m2 holds %s (token %d, first holder's %d)", nodeOf(m2.Guard()), m2.Token(), token)
	}
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// A local waiter whose ctx ends while the cohort's node waits to be handed
// to it (the watch that proves the node is not set yet) takes the node
// out with it: nobody holds or waits for it locally any more.
func TestCohortWithdrawnWaiterReleasesNode(t *testing.T) {
	const path = "/seams/m"
	srv := queuetest.NewServer()
	a := srv.Connect()
	ctx := fakeCtx(t)
	fs := fakeSession()
	m1 := fakeMutex(t, fs, a, path, WithCohort(0, time.Hour))
	m2 := fakeMutex(t, fs, a, path, WithCohort(0, time.Hour))
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(m1.Guard())
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	a.Inject(queuetest.OpWatch, queuetest.Fault{Path: node, Before: func() { <-gate }}) // the watch is slow to be set
	mctx, cancel := context.WithCancel(ctx)
	m2got := goErr(t, func() error { return m2.Lock(mctx) })
	poll(t, "m2 waits in the cohort", func() bool { return CohortWaiters(fs, path) == 1 })
	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := <-m2got; !errors.Is(err, context.Canceled) {
		t.Fatalf("m2's Lock: %v, want context.Canceled", err)
	}
	awaitFake(t, srv, "the node nobody holds or waits for is released", func() bool { return !srv.Exists(node) })
	open()
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Ephemerals(a.SessionID()); len(n) > 0 {
		t.Fatalf("left %v", n)
	}
}

// A cohort's Lock cancelled while the cohort's node waits in the queue
// returns once that node is gone, as every acquisition does (Cleanup in
// the package doc): the node is the cancelled waiter's, made for it alone.
func TestCohortCancelReturnsAfterNodeGone(t *testing.T) {
	t.Parallel()
	const path = "/seams/m"
	srv := queuetest.NewServer()
	a, h := srv.Connect(), srv.Connect()
	ctx := fakeCtx(t)
	hq := plainQ(h, path, queue.KindLock)
	hh, err := hq.Acquire(ctx, queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	m := fakeMutex(t, fakeSession(), a, path, WithCohort(0, time.Hour))
	gate := make(chan struct{})
	var once sync.Once
	open := func() { once.Do(func() { close(gate) }) }
	t.Cleanup(open)
	a.Inject(queuetest.OpDiscard, queuetest.Fault{Before: func() { <-gate }}) // the delete is slow
	mctx, cancel := context.WithCancel(ctx)
	type ret struct {
		err    error
		exists bool // the cohort's node, when Lock returned
	}
	got := make(chan ret, 1)
	go func() {
		err := m.Lock(mctx)
		got <- ret{err, len(srv.Ephemerals(a.SessionID())) > 0}
	}()
	awaitFake(t, srv, "the cohort's node waits for H's", func() bool { return srv.Watching(hh.Path) == 1 })
	cancel()
	awaitFake(t, srv, "the cancelled acquisition deletes its node", func() bool { return srv.Calls(queuetest.OpDiscard) > 0 })
	var r ret
	select {
	case r = <-got: // returned while the delete is held up: wrong
	case <-time.After(time.Second): // still waiting for the delete, as it should
		open()
		r = <-got
	}
	open()
	if !errors.Is(r.err, context.Canceled) || r.exists {
		t.Fatalf("cancelled Lock returned %v with its node still on the server: %v", r.err, r.exists)
	}
	if err := hq.Release(ctx, hh); err != nil {
		t.Fatal(err)
	}
}
