package queue_test

import (
	"slices"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// A node's name carries the lock path's czxid, and a release deletes it
// by name: one announced release, no read of the node first.
func TestSeqNameCarriesPathCzxid(t *testing.T) {
	s, c := setup(t)
	q := seqQ(c)
	for round := range 2 {
		h, err := q.Acquire(testCtx(t), queue.Request{})
		if err != nil {
			t.Fatal(err)
		}
		want := dir + "/" + queue.SeqPrefix(czxid(t, s, dir))
		if !strings.HasPrefix(h.Path, want) {
			t.Fatalf("round %d: node %s, want a name starting %s", round, h.Path, want)
		}
		stats, gets, rels := s.Calls(queuetest.OpStat), s.Calls(queuetest.OpGet), s.Calls(queuetest.OpRelease)
		if err := seqGive(t, q, h); err != nil {
			t.Fatal(err)
		}
		if d := [3]int{s.Calls(queuetest.OpStat) - stats, s.Calls(queuetest.OpGet) - gets, s.Calls(queuetest.OpRelease) - rels}; d != [3]int{0, 0, 1} {
			t.Fatalf("round %d: the release sent %d stats, %d gets, %d releases; want 0, 0, 1", round, d[0], d[1], d[2])
		}
		if _, _, ok := s.Node(h.Path); ok {
			t.Fatalf("round %d: %s left after the release", round, h.Path)
		}
	}
}

// A handle that learnt the path's czxid before the path was reaped and
// re-created makes its first node under the old one: that node is no
// contender, and is deleted; the handle makes it again under the new
// czxid and queues behind the rival that re-created the path.
func TestSeqOldCzxidMadeAgain(t *testing.T) {
	s, c := setup(t)
	old := seqQ(c)
	h, err := old.Acquire(testCtx(t), queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	if err := seqGive(t, old, h); err != nil {
		t.Fatal(err)
	}
	before := czxid(t, s, dir)
	if !s.Reap(dir) {
		t.Fatal("the empty lock path was not reaped")
	}
	rival := s.Connect()
	hr, err := seqQ(rival).Acquire(testCtx(t), queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	after := czxid(t, s, dir)
	if after == before || !strings.HasPrefix(hr.Path, dir+"/"+queue.SeqPrefix(after)) {
		t.Fatalf("the rival holds %s; the path's czxid was %d, is %d", hr.Path, before, after)
	}
	creates := s.Calls(queuetest.OpCreate)
	res := goSeq(t, old, queue.Request{})
	await(t, s, "the old handle waits for the rival", func() bool {
		return slices.Contains(watchesBy(s, c.SessionID()), hr.Path)
	})
	if got := s.Calls(queuetest.OpCreate) - creates; got != 2 {
		t.Fatalf("the old handle sent %d creates, want 2 (one under the old czxid, deleted; one under the new)", got)
	}
	mine := created(s, c.SessionID(), dir)
	if len(mine) != 3 || !strings.HasPrefix(mine[1], dir+"/"+queue.SeqPrefix(before)) || !strings.HasPrefix(mine[2], dir+"/"+queue.SeqPrefix(after)) {
		t.Fatalf("the old handle created %v: want its first node, then one under %s, then one under %s", mine, queue.SeqPrefix(before), queue.SeqPrefix(after))
	}
	if live := s.Ephemerals(c.SessionID()); !slices.Equal(live, mine[2:]) {
		t.Fatalf("the old handle's nodes: %v, want %v (the one under the old czxid deleted)", live, mine[2:])
	}
	blocked(t, res, "the old handle")
	if err := seqGive(t, seqQ(rival), hr); err != nil {
		t.Fatal(err)
	}
	h = holds(t, res)
	if err := seqGive(t, old, h); err != nil {
		t.Fatal(err)
	}
	noNodes(t, s, c.SessionID(), rival.SessionID())
}

// A node of another czxid (a reaped path's earlier life) is no contender:
// a waiter that lists the queue waits for the holder, not for it, and an
// announced release of it (the Unlock of a hold from that earlier life,
// whose node had its name) does not let the waiter hold beside the
// holder.
func TestSeqListerIgnoresOtherLife(t *testing.T) {
	s, c := setup(t)
	hq := seqQ(c)
	h, err := hq.Acquire(testCtx(t), queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	stale := s.Connect()
	sp, _, _, err := stale.CreateSeq(testCtx(t), dir+"/"+queue.SeqPrefix(czxid(t, s, dir)-1), nil)
	if err != nil {
		t.Fatal(err)
	}
	w := s.Connect()
	res := goSeq(t, seqQ(w), queue.Request{})
	await(t, s, "the waiter watches a node", func() bool { return len(watchesBy(s, w.SessionID())) > 0 })
	if got := watchesBy(s, w.SessionID()); !slices.Equal(got, []string{h.Path}) {
		t.Fatalf("the waiter watches %v, want the holder's %s (not %s)", got, h.Path, sp)
	}
	ep, err := stale.Epoch(testCtx(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := stale.ReleaseUntil(testCtx(t), sp, ep); err != nil {
		t.Fatal(err)
	}
	blocked(t, res, "the waiter, after the other life's node was released")
	if err := seqGive(t, hq, h); err != nil {
		t.Fatal(err)
	}
	hw := holds(t, res)
	if err := seqGive(t, seqQ(w), hw); err != nil {
		t.Fatal(err)
	}
	noNodes(t, s, c.SessionID(), w.SessionID(), stale.SessionID())
}

// The path's czxid is the session's to remember: a session's first
// acquisition on a path reads it (one stat), and no later one of any
// handle of the session does.
func TestSeqCzxidReadOncePerSession(t *testing.T) {
	s, c := setup(t)
	for i := range 3 {
		stats := s.Calls(queuetest.OpStat)
		q := seqQ(c) // a new handle each time
		h, err := q.Acquire(testCtx(t), queue.Request{})
		if err != nil {
			t.Fatal(err)
		}
		if err := seqGive(t, q, h); err != nil {
			t.Fatal(err)
		}
		want := 0
		if i == 0 {
			want = 1
		}
		if got := s.Calls(queuetest.OpStat) - stats; got != want {
			t.Fatalf("acquisition %d (a new handle of the session): %d stats, want %d", i, got, want)
		}
	}
}

// A reader that does not know the path's czxid (Holders, and so Break and
// Revoke, and ReadState) takes the newest czxid among the nodes' names for
// the path's: a node of an earlier life with a lower number is not the
// holder.
func TestSeqCurrentLife(t *testing.T) {
	names := []string{"a-seqlock-0000000000", "1f-seqlock-0000000002", "0-seqlock-0000000001",
		"1f-seqlock-0000000003", "filler", "a-seqlock-0000000004"}
	if got, want := queue.CurrentLife(names), []string{"1f-seqlock-0000000002", "1f-seqlock-0000000003", "filler"}; !slices.Equal(got, want) {
		t.Fatalf("CurrentLife(%v) = %v, want %v", names, got, want)
	}
	if got, want := queue.HoldersOf(dir, names), []string{dir + "/1f-seqlock-0000000002"}; !slices.Equal(got, want) {
		t.Fatalf("HoldersOf = %v, want %v", got, want)
	}
	same := []string{"1f-seqlock-0000000002", "x-lock-0000000001"}
	if got := queue.CurrentLife(same); !slices.Equal(got, same) {
		t.Fatalf("CurrentLife(%v) = %v, want it unchanged", same, got)
	}
}
