package zklock

import (
	"testing"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
	"github.com/zklock/zklock/zk"
)

// Finding 3 of issue 34: a MultiLock whose part was lost (its session
// expired) while it waited for a later part must not return that lost part
// as held: a rival may hold it. It starts over instead.
func TestMultiLockPartLostWhileAcquiring(t *testing.T) {
	srv := queuetest.NewServer()
	m, h, r := srv.Connect(), srv.Connect(), srv.Connect()
	ctx := fakeCtx(t)
	fs := fakeSession()
	pa, pb := fakeMutex(t, fs, m, "/seams/a"), fakeMutex(t, fs, m, "/seams/b")
	ml, err := NewMultiLock(pa, pb)
	if err != nil {
		t.Fatal(err)
	}
	hq := plainQ(h, "/seams/b", queue.KindLock)
	hh, err := hq.Acquire(ctx, queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	mlgot := goErr(t, func() error { return ml.Lock(ctx) })
	awaitFake(t, srv, "the MultiLock holds /a and waits for /b", func() bool { return srv.Watching(hh.Path) == 1 })
	m.Expire() // its nodes go; /a's part is lost; the /b waiter enqueues again
	awaitFake(t, srv, "the /b waiter waits again under the new session", func() bool {
		return len(srv.Ephemerals(m.SessionID())) == 1 && srv.Watching(hh.Path) == 1
	})
	rq := plainQ(r, "/seams/a", queue.KindLock)
	rh, err := rq.Acquire(ctx, queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if err := hq.Release(ctx, hh); err != nil {
		t.Fatal(err)
	}
	if err, returned := eitherOr(t, srv, "the MultiLock returns or waits for the rival on /a", mlgot,
		func() bool { return srv.Watching(rh.Path) == 1 }); returned {
		t.Fatalf("MultiLock.Lock returned %v while rival R holds /a (its /a part's Lost closed: %v, the MultiLock's: %v)",
			err, closed(pa.Lost()), closed(ml.Lost()))
	}
	if err := rq.Release(ctx, rh); err != nil {
		t.Fatal(err)
	}
	if err := <-mlgot; err != nil {
		t.Fatalf("MultiLock.Lock: %v", err)
	}
	if closed(ml.Lost()) || closed(pa.Lost()) || closed(pb.Lost()) {
		t.Fatal("MultiLock.Lock returned a lost hold")
	}
	for _, g := range ml.Guard() {
		n := g.(*zk.CheckOp).Path
		if _, st, ok := srv.Node(n); !ok || st.EphemeralOwner != m.SessionID() {
			t.Fatalf("part node %s: exists %v", n, ok)
		}
	}
	if err := ml.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if n := srv.Ephemerals(m.SessionID()); len(n) > 0 {
		t.Fatalf("left %v", n)
	}
}
