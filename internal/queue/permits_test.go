package queue_test

import (
	"errors"
	"testing"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// The one-queue semaphore (Permits) against the in-memory server: which
// node each contender watches, when it lists, and the holders' relays.

func permitsQ(c queue.Conn, limit int) *queue.Permits {
	return &queue.Permits{Conn: c, Dir: dir, Limit: limit}
}

func takePermits(t *testing.T, c queue.Conn, limit, n int) *queue.Permit {
	t.Helper()
	pm, err := permitsQ(c, limit).Acquire(testCtx(t), queue.PermitRequest{N: n})
	if err != nil {
		t.Fatalf("Acquire(%d of %d): %v", n, limit, err)
	}
	t.Cleanup(func() { pm.Stop() })
	return pm
}

type permitResult struct {
	pm  *queue.Permit
	err error
}

func goPermits(t *testing.T, c queue.Conn, limit, n int) <-chan permitResult {
	out := make(chan permitResult, 1)
	go func() {
		pm, err := permitsQ(c, limit).Acquire(testCtx(t), queue.PermitRequest{N: n})
		out <- permitResult{pm, err}
	}()
	return out
}

func gotPermits(t *testing.T, ch <-chan permitResult) *queue.Permit {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Acquire: %v", r.err)
		}
		t.Cleanup(func() { r.pm.Stop() })
		return r.pm
	case <-testCtx(t).Done():
		t.Fatal("Acquire did not return")
	}
	return nil
}

func version(s *queuetest.Server, p string) int32 {
	_, st, _ := s.Node(p)
	return st.Version
}

// The first holder leaves first: the holder behind it, which watches it,
// relays (one write to its own node), and the waiter behind that one lists
// once and holds.
func TestPermitsInOrderRelay(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 2, 1)
	pb := takePermits(t, b, 2, 1)
	await(t, s, "b's holder watch on a", func() bool { return s.Watching(pa.Held.Path) == 1 })
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c watches b", func() bool { return s.Watching(pb.Held.Path) == 1 })
	before := listings(s)
	if err := permitsQ(a, 2).Release(testCtx(t), pa); err != nil {
		t.Fatal(err)
	}
	pc := gotPermits(t, wc)
	if v := version(s, pb.Held.Path); v != 1 {
		t.Fatalf("b's node is at version %d, want 1 (one relay)", v)
	}
	if n := listings(s) - before; n != 1 {
		t.Fatalf("%d listings, want 1 (c's, after the relay)", n)
	}
	for _, p := range []struct {
		c  queue.Conn
		pm *queue.Permit
	}{{b, pb}, {c, pc}} {
		if err := permitsQ(p.c, 2).Release(testCtx(t), p.pm); err != nil {
			t.Fatal(err)
		}
	}
}

// The second holder leaves first: the waiter behind it holds on the
// deletion, without listing, though the first holder is still there.
func TestPermitsOutOfOrderWithoutListing(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 2, 1)
	pb := takePermits(t, b, 2, 1)
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c watches b", func() bool { return s.Watching(pb.Held.Path) == 1 })
	before := listings(s)
	if err := permitsQ(b, 2).Release(testCtx(t), pb); err != nil {
		t.Fatal(err)
	}
	pc := gotPermits(t, wc)
	if n := listings(s) - before; n != 0 {
		t.Fatalf("%d listings, want none", n)
	}
	await(t, s, "c, now a holder behind a, watches a", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
	for _, p := range []struct {
		c  queue.Conn
		pm *queue.Permit
	}{{a, pa}, {c, pc}} {
		if err := permitsQ(p.c, 2).Release(testCtx(t), p.pm); err != nil {
			t.Fatal(err)
		}
	}
}

// Limit 3: the first holder's session expires. Nobody watching it is the
// waiter: the relay goes from holder to holder down to it.
func TestPermitsExpiryRelayedDownTheHolders(t *testing.T) {
	s, _ := setup(t)
	a, b, c, d := s.Connect(), s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 3, 1)
	pb := takePermits(t, b, 3, 1)
	pc := takePermits(t, c, 3, 1)
	wd := goPermits(t, d, 3, 1)
	await(t, s, "d watches c, b watches a, c watches b", func() bool {
		return d.Blocked(queuetest.OpWatch) == 1 && b.Blocked(queuetest.OpWatch) == 1 && c.Blocked(queuetest.OpWatch) == 1
	})
	s.ExpireSession(a.SessionID())
	pd := gotPermits(t, wd)
	if vb, vc := version(s, pb.Held.Path), version(s, pc.Held.Path); vb != 1 || vc != 1 {
		t.Fatalf("relays: b %d, c %d; want one each", vb, vc)
	}
	_ = pa
	for _, p := range []struct {
		c  queue.Conn
		pm *queue.Permit
	}{{b, pb}, {c, pc}, {d, pd}} {
		if err := permitsQ(p.c, 3).Release(testCtx(t), p.pm); err != nil {
			t.Fatal(err)
		}
	}
}

// A request for two waits behind one holder of a limit of two, and a later
// request for one waits behind it (no overtaking); the release lets the
// two in, not the one.
func TestPermitsAllOrNothingInOrder(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 2, 1)
	wb := goPermits(t, b, 2, 2)
	await(t, s, "b watches a", func() bool { return s.Watching(pa.Held.Path) == 1 })
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c waits", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
	if err := permitsQ(a, 2).Release(testCtx(t), pa); err != nil {
		t.Fatal(err)
	}
	pb := gotPermits(t, wb)
	select {
	case r := <-wc:
		t.Fatalf("c holds beside b's two permits (err %v)", r.err)
	default:
	}
	if err := permitsQ(b, 2).Release(testCtx(t), pb); err != nil {
		t.Fatal(err)
	}
	pc := gotPermits(t, wc)
	if err := permitsQ(c, 2).Release(testCtx(t), pc); err != nil {
		t.Fatal(err)
	}
}

// A node of another limit is refused at the first listing, and nothing is
// left behind.
func TestPermitsLimitMismatch(t *testing.T) {
	s, _ := setup(t)
	a, b := s.Connect(), s.Connect()
	pa := takePermits(t, a, 2, 1)
	_, err := permitsQ(b, 3).Acquire(testCtx(t), queue.PermitRequest{N: 1})
	var le *queue.LimitError
	if !errors.As(err, &le) || le.Found != 2 {
		t.Fatalf("err %v, want a LimitError finding 2", err)
	}
	await(t, s, "b's node gone", func() bool { return len(s.Ephemerals(b.SessionID())) == 0 })
	if err := permitsQ(a, 2).Release(testCtx(t), pa); err != nil {
		t.Fatal(err)
	}
}

// A relay made before a holder's watch is set is not missed: c holds, and
// before its watch on b is set, a's session expires, b relays, and d (which
// listed a) waits behind c. c's watch starts from version 0, sees b's
// relay at once and passes it on, and d holds.
func TestPermitsRelayBeforeTheWatchIsSet(t *testing.T) {
	s, _ := setup(t)
	a, b, c, d := s.Connect(), s.Connect(), s.Connect(), s.Connect()
	takePermits(t, a, 3, 1)
	pb := takePermits(t, b, 3, 1)
	await(t, s, "b watches a", func() bool { return b.Blocked(queuetest.OpWatch) == 1 })
	c.Inject(queuetest.OpWatch, queuetest.Fault{Before: func() {
		await(t, s, "d waits", func() bool { return d.Blocked(queuetest.OpWatch) == 1 })
		s.ExpireSession(a.SessionID())
		await(t, s, "b relays", func() bool { return version(s, pb.Held.Path) == 1 })
	}})
	pc := takePermits(t, c, 3, 1) // its watch waits in Before until d waits
	wd := goPermits(t, d, 3, 1)
	pd := gotPermits(t, wd)
	for _, p := range []struct {
		c  queue.Conn
		pm *queue.Permit
	}{{b, pb}, {c, pc}, {d, pd}} {
		if err := permitsQ(p.c, 3).Release(testCtx(t), p.pm); err != nil {
			t.Fatal(err)
		}
	}
}

// A relay made between a waiter's listing and its watch is not missed: d
// listed a, b and c ahead; before its watch on c is set, a's session
// expires and the relay comes down b and c. d's watch starts from version
// 0, returns at once, and d lists and holds.
func TestPermitsRelayBeforeTheWaitersWatch(t *testing.T) {
	s, _ := setup(t)
	a, b, c, d := s.Connect(), s.Connect(), s.Connect(), s.Connect()
	takePermits(t, a, 3, 1)
	pb := takePermits(t, b, 3, 1)
	pc := takePermits(t, c, 3, 1)
	await(t, s, "b and c watch", func() bool {
		return b.Blocked(queuetest.OpWatch) == 1 && c.Blocked(queuetest.OpWatch) == 1
	})
	d.Inject(queuetest.OpWatch, queuetest.Fault{Before: func() {
		s.ExpireSession(a.SessionID())
		await(t, s, "the relay reaches c", func() bool { return version(s, pc.Held.Path) == 1 })
	}})
	pd := gotPermits(t, goPermits(t, d, 3, 1))
	for _, p := range []struct {
		c  queue.Conn
		pm *queue.Permit
	}{{b, pb}, {c, pc}, {d, pd}} {
		if err := permitsQ(p.c, 3).Release(testCtx(t), p.pm); err != nil {
			t.Fatal(err)
		}
	}
}
