package queue_test

import (
	"context"
	"testing"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// The listing-free handoff (Queue.Handoff): a waiter holds without listing
// the queue only when what happened to the node ahead of it proves that
// nothing ahead blocks it any more; anything else makes it look again.

func handoff(q *queue.Queue) *queue.Queue { q.Handoff = true; return q }

// listings counts the listings of the lock path so far.
func listings(s *queuetest.Server) int { return s.Calls(queuetest.OpChildren) }

// A busy lock hands over from holder to waiter with no listing: the
// holder's announced release proves the waiter first, wherever it stands.
func TestHandoffWithoutListing(t *testing.T) {
	s, _ := setup(t)
	conns := []*queuetest.Conn{s.Connect(), s.Connect(), s.Connect(), s.Connect()}
	held := acquire(t, handoff(mutexQ(conns[0])), queue.Request{})
	nodes := []string{held.Path}
	var waiting []<-chan result
	for _, c := range conns[1:] {
		waiting = append(waiting, goAcquire(t, handoff(mutexQ(c)), queue.Request{}))
		pred := nodes[len(nodes)-1]
		await(t, s, "a waiter watches "+pred, func() bool { return s.Watching(pred) == 1 })
		nodes = append(nodes, newNode(t, s, dir, nodes...))
	}
	before := listings(s)
	for i, ch := range waiting {
		if err := handoff(mutexQ(conns[i])).Release(testCtx(t), held); err != nil {
			t.Fatalf("Release: %v", err)
		}
		held = holds(t, ch)
		if held.Path != nodes[i+1] || !held.Waited {
			t.Fatalf("granted %s (waited %v), want %s", held.Path, held.Waited, nodes[i+1])
		}
	}
	if n := listings(s) - before; n != 0 {
		t.Fatalf("%d listings during 3 handoffs, want none", n)
	}
	// The first holder was granted at once: its release is a plain
	// deletion, which its waiter, the only one ahead of it, takes for
	// proof; the two that waited announce theirs.
	if n := s.Calls(queuetest.OpRelease); n != 2 {
		t.Fatalf("%d announced releases, want 2", n)
	}
}

// A waiter that gives up is deleted, not released: the waiter behind it,
// which had two contenders ahead, looks again and waits for the holder.
func TestHandoffAbandonLooksAgain(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	ha := acquire(t, handoff(mutexQ(a)), queue.Request{})
	bctx, cancel := context.WithCancel(testCtx(t))
	bdone := make(chan error, 1)
	go func() { _, err := handoff(mutexQ(b)).Acquire(bctx, queue.Request{}); bdone <- err }()
	await(t, s, "b watches a", func() bool { return s.Watching(ha.Path) == 1 })
	nb := newNode(t, s, dir, ha.Path)
	wc := goAcquire(t, handoff(mutexQ(c)), queue.Request{})
	await(t, s, "c watches b", func() bool { return s.Watching(nb) == 1 })

	before := listings(s)
	cancel()
	if err := <-bdone; err == nil {
		t.Fatal("b's cancelled Acquire succeeded")
	}
	await(t, s, "c watches a", func() bool { return s.Watching(ha.Path) == 1 })
	blocked(t, wc, "c, behind a holder")
	if n := listings(s) - before; n != 1 {
		t.Fatalf("c listed %d times after b left, want 1", n)
	}
	if err := handoff(mutexQ(a)).Release(testCtx(t), ha); err != nil {
		t.Fatal(err)
	}
	holds(t, wc)
	noNodes(t, s, b.SessionID())
}

// Without Handoff a data change never grants (Curator's Revoker writes
// one): the waiter looks again, even when the holder then releases
// announced.
func TestNoHandoffTrustsNoDataChange(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	ha := acquire(t, mutexQ(a), queue.Request{})
	wb := goAcquire(t, mutexQ(b), queue.Request{})
	await(t, s, "b watches a", func() bool { return s.Watching(ha.Path) == 1 })
	nb := newNode(t, s, dir, ha.Path)
	wc := goAcquire(t, mutexQ(c), queue.Request{})
	await(t, s, "c watches b", func() bool { return s.Watching(nb) == 1 })

	// A revocation request on the waiter b: c must not take it for b's
	// release, since a still holds.
	if err := s.SetData(nb, []byte("__REVOKE__")); err != nil {
		t.Fatal(err)
	}
	await(t, s, "c watches b again", func() bool {
		return len(watchesBy(s, c.SessionID())) == 2 && s.Watching(nb) == 1
	})
	blocked(t, wc, "c")
	if err := handoff(mutexQ(a)).Release(testCtx(t), ha); err != nil {
		t.Fatal(err)
	}
	hb := holds(t, wb)
	blocked(t, wc, "c, behind b")
	if err := mutexQ(b).Release(testCtx(t), hb); err != nil {
		t.Fatal(err)
	}
	holds(t, wc)
}

// A writer that downgraded keeps a read node with its own sequence
// number, below a writer queued behind it. Its write node is left, not
// released, and a writer never trusts that only one contender was ahead:
// the writer behind looks again and waits for the read node.
func TestHandoffDowngradeKeepsWriterOut(t *testing.T) {
	s, _ := setup(t)
	w, x := s.Connect(), s.Connect()
	wq := handoff(rwQ(w, queue.KindWrite))
	hw := acquire(t, wq, queue.Request{})
	wx := goAcquire(t, handoff(rwQ(x, queue.KindWrite)), queue.Request{})
	await(t, s, "x watches w", func() bool { return s.Watching(hw.Path) == 1 })

	hr, err := handoff(rwQ(w, queue.KindRead)).Join(testCtx(t), hw, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := wq.Leave(testCtx(t), hw); err != nil {
		t.Fatal(err)
	}
	await(t, s, "x watches the read node", func() bool { return s.Watching(hr.Path) == 1 })
	blocked(t, wx, "a writer behind a downgraded read lock")
	if n := s.Calls(queuetest.OpRelease); n != 0 {
		t.Fatalf("%d announced releases, want none", n)
	}
	if err := handoff(rwQ(w, queue.KindRead)).Release(testCtx(t), hr); err != nil {
		t.Fatal(err)
	}
	holds(t, wx)
}

// Readers behind a writer hold at its announced release without a
// listing; a writer behind readers lists after each reader leaves (readers
// never announce: a reader's release proves nothing about the readers
// ahead of it).
func TestHandoffReadersAndWriters(t *testing.T) {
	s, _ := setup(t)
	w, r1, r2, x := s.Connect(), s.Connect(), s.Connect(), s.Connect()
	hw := acquire(t, handoff(rwQ(w, queue.KindWrite)), queue.Request{})
	rq1, rq2 := handoff(rwQ(r1, queue.KindRead)), handoff(rwQ(r2, queue.KindRead))
	wr1 := goAcquire(t, rq1, queue.Request{Blocks: reader})
	wr2 := goAcquire(t, rq2, queue.Request{Blocks: reader})
	await(t, s, "both readers watch the writer", func() bool { return s.Watching(hw.Path) == 2 })
	wx := goAcquire(t, handoff(rwQ(x, queue.KindWrite)), queue.Request{})
	await(t, s, "x waits", func() bool { return x.Blocked(queuetest.OpWatch) == 1 })

	before := listings(s)
	if err := handoff(rwQ(w, queue.KindWrite)).Release(testCtx(t), hw); err != nil {
		t.Fatal(err)
	}
	h1, h2 := holds(t, wr1), holds(t, wr2)
	if n := listings(s) - before; n != 0 {
		t.Fatalf("readers listed %d times at the writer's release, want none", n)
	}
	blocked(t, wx, "a writer behind two readers")
	for _, r := range []struct {
		q *queue.Queue
		h *queue.Held
	}{{rq1, h1}, {rq2, h2}} {
		blocked(t, wx, "a writer behind a reader")
		if err := r.q.Release(testCtx(t), r.h); err != nil {
			t.Fatal(err)
		}
	}
	holds(t, wx)
	// The writer was granted at once: a plain deletion, which each reader
	// takes for proof, the writer being the only contender ahead of it
	// that could block it.
	if n := s.Calls(queuetest.OpRelease); n != 0 {
		t.Fatalf("%d announced releases, want none", n)
	}
}

// A quiet node (a cohort's, an election candidate's) carries no
// announcement: a write to its data (a cohort's guard bump) makes the
// waiter behind it look again, never hold; its release is a plain
// deletion.
func TestHandoffQuietNode(t *testing.T) {
	s, _ := setup(t)
	a, b, c := s.Connect(), s.Connect(), s.Connect()
	quiet := handoff(mutexQ(a))
	quiet.Quiet = true
	ha := acquire(t, quiet, queue.Request{Data: []byte("a")})
	if data, _, _ := s.Node(ha.Path); string(data) != "a" {
		t.Fatalf("a quiet node's data is %q, want the caller's", data)
	}
	wb := goAcquire(t, handoff(mutexQ(b)), queue.Request{})
	await(t, s, "b watches a", func() bool { return s.Watching(ha.Path) == 1 })
	nb := newNode(t, s, dir, ha.Path)
	wc := goAcquire(t, handoff(mutexQ(c)), queue.Request{})
	await(t, s, "c watches b", func() bool { return s.Watching(nb) == 1 })
	before := listings(s)
	if err := s.SetData(ha.Path, []byte("a")); err != nil {
		t.Fatal(err)
	}
	await(t, s, "b watches a again", func() bool { return s.Watching(ha.Path) == 1 && listings(s) == before+1 })
	blocked(t, wb, "b behind a quiet holder whose data changed")
	if err := quiet.Release(testCtx(t), ha); err != nil {
		t.Fatal(err)
	}
	if n := s.Calls(queuetest.OpRelease); n != 0 {
		t.Fatalf("a quiet node's release was announced (%d)", n)
	}
	hb := holds(t, wb)
	if data, _, _ := s.Node(hb.Path); !queue.Announces(data) {
		t.Fatalf("b's node data %q does not announce", data)
	}
	if err := handoff(mutexQ(b)).Release(testCtx(t), hb); err != nil {
		t.Fatal(err)
	}
	holds(t, wc)
}

// A writer behind a single reader holds at the reader's deletion without a
// listing: with no writer ahead of it, nothing (no downgrade) can place a
// node ahead of it, so the set ahead did shrink to nothing.
func TestHandoffWriterBehindOneReader(t *testing.T) {
	s, _ := setup(t)
	r, x := s.Connect(), s.Connect()
	rq := handoff(rwQ(r, queue.KindRead))
	hr := acquire(t, rq, queue.Request{Blocks: reader})
	wx := goAcquire(t, handoff(rwQ(x, queue.KindWrite)), queue.Request{})
	await(t, s, "x watches the reader", func() bool { return s.Watching(hr.Path) == 1 })
	before := listings(s)
	if err := rq.Release(testCtx(t), hr); err != nil {
		t.Fatal(err)
	}
	holds(t, wx)
	if n := listings(s) - before; n != 0 {
		t.Fatalf("the writer listed %d times at the reader's release, want none", n)
	}
}
