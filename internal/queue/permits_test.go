package queue_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
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

// heldPermit is a permit and the Conn of its session.
type heldPermit struct {
	c  queue.Conn
	pm *queue.Permit
}

// releasePermits releases each permit through its own session, in order.
func releasePermits(t *testing.T, limit int, hs ...heldPermit) {
	t.Helper()
	for _, h := range hs {
		if err := permitsQ(h.c, limit).Release(testCtx(t), h.pm); err != nil {
			t.Fatal(err)
		}
	}
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
// publishes its rank (one write to its own node), and the waiter of one
// permit behind that one holds at the write, without a listing.
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
	data, _, _ := s.Node(pb.Held.Path)
	if rank, ok := queue.PermitRank(data); version(s, pb.Held.Path) != 1 || !ok || rank != 1 {
		t.Fatalf("b's node at version %d publishes rank %d (%v), want one write of rank 1", version(s, pb.Held.Path), rank, ok)
	}
	if n := listings(s) - before; n != 0 {
		t.Fatalf("%d listings, want none", n)
	}
	releasePermits(t, 2, heldPermit{b, pb}, heldPermit{c, pc})
}

// Limit 3: the second of three holders leaves first. Its successor (a
// holder) sees it go, lists once to learn what is left ahead of it (a
// listing costs no more than a read of the next node, and less when
// several ahead have gone), and publishes its lower rank, which lets in
// the waiter behind it, which watches only that successor and lists
// nothing.
func TestPermitsRankPassesAGap(t *testing.T) {
	s, _ := setup(t)
	a, b, c, d := s.Connect(), s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 3, 1)
	pb := takePermits(t, b, 3, 1)
	pc := takePermits(t, c, 3, 1)
	wd := goPermits(t, d, 3, 1)
	await(t, s, "d watches c", func() bool { return s.Watching(pc.Held.Path) == 1 })
	before := listings(s)
	if err := permitsQ(b, 3).Release(testCtx(t), pb); err != nil {
		t.Fatal(err)
	}
	pd := gotPermits(t, wd)
	if n := listings(s) - before; n != 1 {
		t.Fatalf("%d listings, want one (c's)", n)
	}
	if data, _, _ := s.Node(pc.Held.Path); string(data) != "\x00zklock:k2" {
		t.Fatalf("c's node holds %q, want its rank 2", data)
	}
	releasePermits(t, 3, heldPermit{a, pa}, heldPermit{c, pc}, heldPermit{d, pd})
}

// A waiter of two permits cannot take a published rank on trust (it proves
// room for one): it reads the rank, which sets its watch again, and holds
// only when the rank leaves room for two.
func TestPermitsTwoReadTheRank(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 3, 1)
	pb := takePermits(t, b, 3, 1)
	wc := goPermits(t, c, 3, 2)
	await(t, s, "c watches b", func() bool { return s.Watching(pb.Held.Path) == 1 })
	if err := permitsQ(a, 3).Release(testCtx(t), pa); err != nil {
		t.Fatal(err)
	}
	pc := gotPermits(t, wc) // b publishes 1: room for two
	if n := s.Calls(queuetest.OpGet) + s.Calls(queuetest.OpStat); n != 0 {
		t.Fatalf("%d plain reads, want none (the rank comes with the watch)", n)
	}
	releasePermits(t, 3, heldPermit{b, pb}, heldPermit{c, pc})
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
	releasePermits(t, 2, heldPermit{a, pa}, heldPermit{c, pc})
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
	releasePermits(t, 3, heldPermit{b, pb}, heldPermit{c, pc}, heldPermit{d, pd})
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
	if !errors.Is(err, errs.ErrLimitMismatch) || !strings.Contains(err.Error(), "of a semaphore of 2") {
		t.Fatalf("err %v, want a limit mismatch finding 2", err)
	}
	await(t, s, "b's node gone", func() bool { return len(s.Ephemerals(b.SessionID())) == 0 })
	if err := permitsQ(a, 2).Release(testCtx(t), pa); err != nil {
		t.Fatal(err)
	}
}

// A rank published before a holder's watch is set is not missed: c holds,
// and before its watch on b is set, a's session expires, b publishes 1, and
// d (which listed a) waits behind c. c reads b's rank with its watch, in
// one request, publishes its own, and d holds.
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
	releasePermits(t, 3, heldPermit{b, pb}, heldPermit{c, pc}, heldPermit{d, pd})
}

// A rank published between a waiter's listing and its watch is not missed:
// d listed a, b and c ahead; before its watch on c is set, a's session
// expires and the ranks come down b and c. d reads c's rank with its watch
// and holds, without a listing.
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
	before := listings(s)
	pd := gotPermits(t, goPermits(t, d, 3, 1))
	if n := listings(s) - before; n != 0 {
		t.Fatalf("%d listings besides the create's, want none", n)
	}
	releasePermits(t, 3, heldPermit{b, pb}, heldPermit{c, pc}, heldPermit{d, pd})
}

// What a contended lease costs: 8 clients keep a queue of 2 holders and 6
// waiters on a limit of 2; at each step the oldest holder releases and
// queues again, and the first waiter holds. Every request is counted (a
// create with its pipelined listing is two): six a lease, the create and
// listing, the waiter's watch, the holder's read of its predecessor after
// its grant, the rank it publishes when it becomes first, and the delete.
// With persistent watches (a session's one watch on the directory, set
// once and counted) a node counts the nodes ahead from the deletions it
// hears of, and reads nothing: four (create, listing, rank, delete).
func TestPermitsRequestsPerLease(t *testing.T) {
	for _, tc := range []struct {
		name       string
		persistent bool
		want       float64
	}{{"one-shot watches", false, 6}, {"persistent watches", true, 4}} {
		t.Run(tc.name, func(t *testing.T) {
			per := requestsPerLease(t, tc.persistent)
			t.Logf("%.2f requests a lease", per)
			if per > tc.want {
				t.Fatalf("%.2f requests a lease, want %v", per, tc.want)
			}
		})
	}
}

func requestsPerLease(t *testing.T, persistent bool) float64 {
	s, _ := setup(t)
	conn := func(c *queuetest.Conn) queue.Conn {
		if persistent {
			return c.Persistent()
		}
		return c
	}
	type holder struct {
		c  *queuetest.Conn
		pm *queue.Permit
	}
	type waiter struct {
		c  *queuetest.Conn
		ch <-chan permitResult
	}
	var holders []holder
	var waiters []waiter
	for range 2 {
		c := s.Connect()
		holders = append(holders, holder{c, takePermits(t, conn(c), 2, 1)})
	}
	enqueue := func(c *queuetest.Conn) {
		waiters = append(waiters, waiter{c, goPermits(t, conn(c), 2, 1)})
		await(t, s, "the new waiter watches", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
	}
	for range 6 {
		enqueue(s.Connect())
	}
	ops := []queuetest.Op{queuetest.OpCreate, queuetest.OpChildren, queuetest.OpWatch, queuetest.OpSet,
		queuetest.OpDelete, queuetest.OpGet, queuetest.OpStat, queuetest.OpAddWatch}
	requests := func() int {
		n := s.Calls(queuetest.OpCreate) // each create came with a listing
		for _, op := range ops {
			n += s.Calls(op)
		}
		return n
	}
	const warm, steps = 8, 40
	var start int
	for i := range steps {
		if i == warm {
			start = requests()
		}
		h := holders[0]
		holders = holders[1:]
		if err := permitsQ(conn(h.c), 2).Release(testCtx(t), h.pm); err != nil {
			t.Fatal(err)
		}
		enqueue(h.c)
		w := waiters[0]
		waiters = waiters[1:]
		holders = append(holders, holder{w.c, gotPermits(t, w.ch)})
		await(t, s, "the new holder watches the one ahead", func() bool { return w.c.Blocked(queuetest.OpWatch) == 1 })
	}
	per := float64(requests()-start) / (steps - warm)
	for _, w := range waiters { // drain: every release lets the next in
		h := holders[0]
		holders = holders[1:]
		if err := permitsQ(conn(h.c), 2).Release(testCtx(t), h.pm); err != nil {
			t.Fatal(err)
		}
		holders = append(holders, holder{w.c, gotPermits(t, w.ch)})
	}
	for _, h := range holders {
		if err := permitsQ(conn(h.c), 2).Release(testCtx(t), h.pm); err != nil {
			t.Fatal(err)
		}
	}
	return per
}

// A waiter's session ends between two watches: it watched b, b left, and
// before its watch on a (still ahead, still holding) is set, its session
// expires. The watch it sets belongs to the new session, which its node
// does not: it must find out then, not when a next changes, and queue again
// under the new session.
func TestPermitsSessionEndsBetweenWatches(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 1, 1)
	bctx, cancelB := context.WithCancel(testCtx(t))
	wb := make(chan error, 1)
	go func() {
		_, err := permitsQ(b, 1).Acquire(bctx, queue.PermitRequest{N: 1})
		wb <- err
	}()
	await(t, s, "b waits on a", func() bool { return b.Blocked(queuetest.OpWatch) == 1 })
	wc := goPermits(t, c, 1, 1)
	await(t, s, "c waits on b", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
	old := c.SessionID()
	c.Inject(queuetest.OpWatch, queuetest.Fault{Before: func() { c.Expire() }})
	cancelB() // b leaves the queue; c moves on to a and its session ends
	if err := <-wb; !errors.Is(err, context.Canceled) {
		t.Fatalf("b: %v, want context.Canceled", err)
	}
	await(t, s, "c queued again under its new session", func() bool {
		return c.SessionID() != old && len(s.Ephemerals(c.SessionID())) == 1
	})
	if err := permitsQ(a, 1).Release(testCtx(t), pa); err != nil {
		t.Fatal(err)
	}
	pc := gotPermits(t, wc)
	if err := permitsQ(c, 1).Release(testCtx(t), pc); err != nil {
		t.Fatal(err)
	}
}

// heldPermits sums the permits of the granted nodes still on the server.
func heldPermits(s *queuetest.Server, pms ...*queue.Permit) int {
	sum := 0
	for _, pm := range pms {
		if pm != nil && s.Exists(pm.Held.Path) {
			n, _, _ := queue.PermitWeight(pm.Held.Node().Name)
			sum += n
		}
	}
	return sum
}

// Limit 3: a, p, x hold one each; s waits on x. p leaves: x publishes 2
// and s holds (a, x, s). x leaves: s publishes 2 (a, s). s then comes to
// watch p, which went before x's rank was written: that rank did not count
// it, so s must not take it off again (it would publish 1, t would read it
// and publish 2, and u would hold beside a, s and t). t, then u, queue:
// u holds only once a has left.
func TestPermitsNodeGoneBeforeARankCountsOnce(t *testing.T) {
	s, _ := setup(t)
	a, p, x, sc, tc, uc := s.Connect(), s.Connect(), s.Connect(), s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 3, 1)
	pp := takePermits(t, p, 3, 1)
	px := takePermits(t, x, 3, 1)
	await(t, s, "x watches p", func() bool { return s.Watching(pp.Held.Path) == 1 })
	ws := goPermits(t, sc, 3, 1)
	await(t, s, "s watches x", func() bool { return s.Watching(px.Held.Path) == 1 })
	releasePermits(t, 3, heldPermit{p, pp})
	ps := gotPermits(t, ws)
	await(t, s, "s's holder watches x", func() bool { return s.Watching(px.Held.Path) == 1 })
	releasePermits(t, 3, heldPermit{x, px})
	await(t, s, "s watches a", func() bool { return s.Watching(pa.Held.Path) == 1 })
	if data, _, _ := s.Node(ps.Held.Path); string(data) != "\x00zklock:k2" {
		t.Fatalf("s publishes %q, want rank 2 (a and s hold)", data)
	}
	pt := takePermits(t, tc, 3, 1) // a, s, t: 3
	await(t, s, "t watches s", func() bool { return s.Watching(ps.Held.Path) == 1 && tc.Blocked(queuetest.OpWatch) == 1 })
	wu := goPermits(t, uc, 3, 1)
	await(t, s, "u watches t", func() bool { return uc.Blocked(queuetest.OpWatch) == 1 })
	select {
	case r := <-wu:
		t.Fatalf("u holds beside a, s and t (err %v): %d permits of 3", r.err, heldPermits(s, pa, ps, pt, r.pm))
	default:
	}
	releasePermits(t, 3, heldPermit{a, pa})
	pu := gotPermits(t, wu)
	if n := heldPermits(s, pa, ps, pt, pu); n > 3 {
		t.Fatalf("%d permits held of 3", n)
	}
	releasePermits(t, 3, heldPermit{sc, ps}, heldPermit{tc, pt}, heldPermit{uc, pu})
}

// The same for a waiter of three: s waits on x; p leaves, x publishes 2;
// x leaves, s's bound is a's 1; s then finds p gone, which the rank did
// not count: s must not hold its three until a leaves.
func TestPermitsNodeGoneBeforeARankGrantsNothing(t *testing.T) {
	s, _ := setup(t)
	a, p, x, sc := s.Connect(), s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 3, 1)
	pp := takePermits(t, p, 3, 1)
	px := takePermits(t, x, 3, 1)
	await(t, s, "x watches p", func() bool { return s.Watching(pp.Held.Path) == 1 })
	ws := goPermits(t, sc, 3, 3)
	await(t, s, "s watches x", func() bool { return s.Watching(px.Held.Path) == 1 })
	releasePermits(t, 3, heldPermit{p, pp})
	await(t, s, "s read x's rank and watches x again", func() bool {
		return version(s, px.Held.Path) == 1 && s.Watching(px.Held.Path) == 1 && sc.Blocked(queuetest.OpWatch) == 1
	})
	releasePermits(t, 3, heldPermit{x, px})
	await(t, s, "s watches a", func() bool { return s.Watching(pa.Held.Path) == 1 })
	select {
	case r := <-ws:
		t.Fatalf("s holds three beside a's one (err %v)", r.err)
	default:
	}
	releasePermits(t, 3, heldPermit{a, pa})
	ps := gotPermits(t, ws)
	releasePermits(t, 3, heldPermit{sc, ps})
}

// A node granted at once on a listing of its own, taken after its create
// (the pipelined one was lost), may have been listed by the node behind it
// before nodes ahead of both went: it owes that node its rank. Limit 2: a
// holds; b's create comes without a listing; before b lists, c queues
// behind b (counting a) and a leaves. b holds at once (rank 1) and must
// publish it, or c, which fits, waits until b leaves.
func TestPermitsLateListingPublishes(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 2, 1)
	var wc <-chan permitResult
	b.Inject(queuetest.OpCreate, queuetest.Fault{Unlisted: true})
	b.Inject(queuetest.OpChildren, queuetest.Fault{Before: func() {
		wc = goPermits(t, c, 2, 1)
		await(t, s, "c waits on b", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
		releasePermits(t, 2, heldPermit{a, pa})
	}})
	pb := takePermits(t, b, 2, 1)
	pc := gotPermits(t, wc)
	releasePermits(t, 2, heldPermit{b, pb}, heldPermit{c, pc})
}

// The rank a node owes at its grant is written by its holder's goroutine,
// not with the caller's ctx, which may end as Acquire returns. Limit 2: a
// holds two; b and c wait for one each. b's ctx ends during its grant; b
// holds (rank 1) and c must hold too.
func TestPermitsRankOwedAtGrantOutlivesCtx(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 2, 2)
	bctx, cancelB := context.WithCancel(testCtx(t))
	b.Inject(queuetest.OpEpoch, queuetest.Fault{})                            // the waiter's check after its watch
	b.Inject(queuetest.OpEpoch, queuetest.Fault{After: func() { cancelB() }}) // the grant's
	wb := make(chan permitResult, 1)
	go func() {
		pm, err := permitsQ(b, 2).Acquire(bctx, queue.PermitRequest{N: 1})
		wb <- permitResult{pm, err}
	}()
	await(t, s, "b waits on a", func() bool { return b.Blocked(queuetest.OpWatch) == 1 })
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c waits on b", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
	releasePermits(t, 2, heldPermit{a, pa})
	pb := gotPermits(t, wb)
	pc := gotPermits(t, wc)
	releasePermits(t, 2, heldPermit{b, pb}, heldPermit{c, pc})
}

// A holder's goroutine tries a failed read again for as long as it holds
// (a connection loss its session's retry policy gave up on). Limit 2: a
// and b hold, b's first watch on a fails; c queues behind b; a leaves: b
// must see it and publish, and c hold.
func TestPermitsHolderRetriesAFailedWatch(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	pa := takePermits(t, a, 2, 1)
	b.Inject(queuetest.OpWatch, queuetest.Fault{Err: client.ErrConnectionLoss})
	pb := takePermits(t, b, 2, 1)
	await(t, s, "b watches a after the failure", func() bool { return b.Pending() == 0 && s.Watching(pa.Held.Path) == 1 })
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c waits on b", func() bool { return s.Watching(pb.Held.Path) == 1 })
	releasePermits(t, 2, heldPermit{a, pa})
	pc := gotPermits(t, wc)
	releasePermits(t, 2, heldPermit{b, pb}, heldPermit{c, pc})
}

// Permits outside 1..Limit are refused, not tried for ever.
func TestPermitsBadCount(t *testing.T) {
	_, c := setup(t)
	for _, n := range []int{0, -1, 3} {
		if _, err := permitsQ(c, 2).Acquire(testCtx(t), queue.PermitRequest{N: n}); err == nil {
			t.Fatalf("Acquire(%d of 2) succeeded", n)
		}
	}
}
