package queue_test

import (
	"testing"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// Permits over a Conn that tracks the directory (queuetest.Persistent): a
// node counts the nodes ahead of it from its listing less the deletions it
// is told of, and reads nothing.

// requests counts every request of the Permits protocol on s (a create
// with its listing is two).
func requests(s *queuetest.Server) int {
	n := s.Calls(queuetest.OpCreate)
	for _, op := range []queuetest.Op{queuetest.OpCreate, queuetest.OpChildren, queuetest.OpWatch, queuetest.OpSet,
		queuetest.OpDelete, queuetest.OpGet, queuetest.OpStat, queuetest.OpAddWatch} {
		n += s.Calls(op)
	}
	return n
}

// Limit 2: the first holder leaves; the waiter behind the second holds at
// the deletion, with no listing and no read; the second holder, now first,
// still publishes its rank for waiters that read ranks.
func TestPermitsTrackedInOrder(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect().Persistent(), s.Connect().Persistent(), s.Connect().Persistent()
	pa := takePermits(t, a, 2, 1)
	pb := takePermits(t, b, 2, 1)
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c and b's holder wait", func() bool { return c.Blocked(queuetest.OpWatch) == 1 && b.Blocked(queuetest.OpWatch) == 1 })
	before := requests(s)
	releasePermits(t, 2, heldPermit{a, pa})
	pc := gotPermits(t, wc)
	await(t, s, "b publishes", func() bool { return version(s, pb.Held.Path) == 1 })
	if n := requests(s) - before; n != 2 {
		t.Fatalf("%d requests from a's release to c's grant, want 2 (the delete, b's rank)", n)
	}
	releasePermits(t, 2, heldPermit{b, pb}, heldPermit{c, pc})
}

// Limit 3, three holders and a waiter: the middle holder leaves, then the
// first one's session expires; the waiter holds on the first deletion, and
// a second waiter on the second, each without a listing.
func TestPermitsTrackedOutOfOrder(t *testing.T) {
	s, _ := setup(t)
	a, b, c, d, e := s.Connect().Persistent(), s.Connect().Persistent(), s.Connect().Persistent(),
		s.Connect().Persistent(), s.Connect().Persistent()
	takePermits(t, a, 3, 1)
	pb := takePermits(t, b, 3, 1)
	pc := takePermits(t, c, 3, 1)
	wd := goPermits(t, d, 3, 1)
	await(t, s, "d waits", func() bool { return d.Blocked(queuetest.OpWatch) == 1 })
	we := goPermits(t, e, 3, 1)
	await(t, s, "e waits", func() bool { return e.Blocked(queuetest.OpWatch) == 1 })
	before := listings(s)
	releasePermits(t, 3, heldPermit{b, pb})
	pd := gotPermits(t, wd)
	select {
	case r := <-we:
		t.Fatalf("e holds beside a, c and d (err %v)", r.err)
	default:
	}
	s.ExpireSession(a.SessionID())
	pe := gotPermits(t, we)
	if n := listings(s) - before; n != 0 {
		t.Fatalf("%d listings, want none", n)
	}
	if held := heldPermits(s, pc, pd, pe); held != 3 {
		t.Fatalf("%d permits held, want 3", held)
	}
	releasePermits(t, 3, heldPermit{c, pc}, heldPermit{d, pd}, heldPermit{e, pe})
}

// A waiter that reads ranks (a Conn without persistent watches: another
// server, or an earlier zklock) behind tracked holders is let in by the
// rank the tracked holder publishes.
func TestPermitsTrackedHolderPublishesForAReader(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect().Persistent(), s.Connect().Persistent(), s.Connect()
	pa := takePermits(t, a, 2, 1)
	pb := takePermits(t, b, 2, 1)
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c watches b", func() bool { return s.Watching(pb.Held.Path) == 1 })
	releasePermits(t, 2, heldPermit{a, pa})
	pc := gotPermits(t, wc)
	if data, _, _ := s.Node(pb.Held.Path); string(data) != "\x00zklock:k1" {
		t.Fatalf("b's node holds %q, want its rank 1", data)
	}
	releasePermits(t, 2, heldPermit{b, pb}, heldPermit{c, pc})
}

// A waiter whose epoch ends may have missed a deletion: it tracks again
// and lists again, and holds once the nodes ahead have gone.
func TestPermitsTrackedListsAfterEpochEnd(t *testing.T) {
	s, _ := setup(t)
	a, b := s.Connect().Persistent(), s.Connect().Persistent()
	pa := takePermits(t, a, 1, 1)
	wb := goPermits(t, b, 1, 1)
	await(t, s, "b waits", func() bool { return b.Blocked(queuetest.OpWatch) == 1 })
	before := listings(s)
	b.EndEpoch()
	b.NewEpoch() // the same session, as after a reconnect
	await(t, s, "b listed again", func() bool { return listings(s) > before })
	releasePermits(t, 1, heldPermit{a, pa})
	pb := gotPermits(t, wb)
	releasePermits(t, 1, heldPermit{b, pb})
}

// All or nothing, in order, when tracked: a request for two waits behind
// one holder, a later request for one waits behind it.
func TestPermitsTrackedAllOrNothing(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect().Persistent(), s.Connect().Persistent(), s.Connect().Persistent()
	pa := takePermits(t, a, 2, 1)
	wb := goPermits(t, b, 2, 2)
	await(t, s, "b waits", func() bool { return b.Blocked(queuetest.OpWatch) == 1 })
	wc := goPermits(t, c, 2, 1)
	await(t, s, "c waits", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
	releasePermits(t, 2, heldPermit{a, pa})
	pb := gotPermits(t, wb)
	select {
	case r := <-wc:
		t.Fatalf("c holds beside b's two permits (err %v)", r.err)
	default:
	}
	releasePermits(t, 2, heldPermit{b, pb})
	pc := gotPermits(t, wc)
	releasePermits(t, 2, heldPermit{c, pc})
}

var _ queue.Tracker = queuetest.Persistent{}
