package queue_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

func seqQ(c queue.Conn) *queue.Seq {
	return &queue.Seq{Q: &queue.Queue{Conn: c, Dir: dir, Rules: &queue.Rules{Kind: queue.KindSeqLock,
		Accept: []string{queue.KindSeqLock}, OneKind: true, Handoff: true}}}
}

// goSeq is goAcquire for the sequence layout.
func goSeq(t *testing.T, q *queue.Seq, r queue.Request) <-chan result {
	ctx, cancel := context.WithCancel(testCtx(t))
	out := make(chan result, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h, err := q.Acquire(ctx, r)
		out <- result{h, err}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// seqGive releases h as the hold engine does.
func seqGive(t *testing.T, q *queue.Seq, h *queue.Held) error {
	return q.Give(testCtx(t), &queue.Place{Held: []*queue.Held{h}})
}

// fill puts n children of no kind under dir: they count among its
// children, so that a queue beside them is walked, not listed.
func fill(t *testing.T, c *queuetest.Conn, n int) {
	t.Helper()
	for i := range n {
		if err := c.CreateContainer(t.Context(), fmt.Sprintf("%s/filler-%d", dir, i)); err != nil {
			t.Fatal(err)
		}
	}
}

// A waiter in a walked queue finds the node ahead by its number and waits
// on it, and every holder announces its release, the one granted at once
// too: nobody lists the queue, neither to enqueue nor to take the lock.
func TestSeqHandoffWithoutListing(t *testing.T) {
	s, c := setup(t)
	fill(t, c, queue.SeqListBelow+1)
	h0, err := seqQ(c).Acquire(testCtx(t), queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	base := s.Calls(queuetest.OpChildren) // the holder's: its walk found nothing below
	const n = 5
	conns := make([]*queuetest.Conn, n)
	res := make([]<-chan result, n)
	prev := h0.Path
	for i := range n {
		conns[i] = s.Connect()
		res[i] = goSeq(t, seqQ(conns[i]), queue.Request{})
		await(t, s, fmt.Sprintf("waiter %d watches the node ahead", i), func() bool {
			return slices.Contains(watchesBy(s, conns[i].SessionID()), prev)
		})
		prev = created(s, conns[i].SessionID(), dir)[0]
	}
	if got := s.Calls(queuetest.OpChildren) - base; got != 0 {
		t.Fatalf("%d listings while the waiters enqueued, want 0", got)
	}
	if err := seqGive(t, seqQ(c), h0); err != nil {
		t.Fatal(err)
	}
	h := holds(t, res[0])
	for i := 1; i < n; i++ {
		blocked(t, res[i], fmt.Sprintf("waiter %d", i))
		if err := seqGive(t, seqQ(conns[i-1]), h); err != nil {
			t.Fatal(err)
		}
		h = holds(t, res[i])
	}
	if got := s.Calls(queuetest.OpChildren) - base; got != 0 {
		t.Fatalf("%d listings in %d handoffs, want 0", got, n)
	}
}

// A create cut off by connection loss is resolved by the token in the
// node's data: a node it made is adopted (one node, its czxid the token);
// a create that was not applied is sent again.
func TestSeqCreateCutOff(t *testing.T) {
	for _, tc := range []struct {
		name    string
		fault   queuetest.Fault
		creates int
	}{
		{"applied", queuetest.Fault{Err: client.ErrConnectionLoss}, 1},
		{"not applied", queuetest.Fault{Lost: true}, 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := setup(t)
			other := s.Connect() // a node of another session, with another token, is left alone
			ho, err := seqQ(other).Acquire(testCtx(t), queue.Request{Data: []byte("o")})
			if err != nil {
				t.Fatal(err)
			}
			c.Inject(queuetest.OpCreate, tc.fault)
			res := goSeq(t, seqQ(c), queue.Request{Data: []byte("d")})
			await(t, s, "the waiter watches the holder", func() bool {
				return slices.Contains(watchesBy(s, c.SessionID()), ho.Path)
			})
			consumed(t, c)
			mine := created(s, c.SessionID(), dir)
			if len(mine) != 1 {
				t.Fatalf("created %v, want one node", mine)
			}
			if got := s.Calls(queuetest.OpCreate); got != tc.creates+1 {
				t.Fatalf("%d creates sent, want %d", got-1, tc.creates)
			}
			if err := seqGive(t, seqQ(other), ho); err != nil {
				t.Fatal(err)
			}
			h := holds(t, res)
			if h.Path != mine[0] || h.Token != czxid(t, s, h.Path) || h.Epoch.SessionID != c.SessionID() {
				t.Fatalf("held %+v, created %v", h, mine)
			}
			data, _, _ := s.Node(h.Path)
			if got := string(queue.UserData(data)); got != "d" || !queue.Announces(data) {
				t.Fatalf("node data %q: user data %q, want \"d\", announcing", data, got)
			}
		})
	}
}

// A handle whose last enqueue found a short queue pipelines the listing
// behind its next create, as the default layout does, instead of asking
// for the count and listing after it: no listing of its own.
func TestSeqShortQueueListsWithCreate(t *testing.T) {
	s, c := setup(t)
	holder, w := seqQ(c), seqQ(s.Connect())
	for round := range 2 {
		h, err := holder.Acquire(testCtx(t), queue.Request{})
		if err != nil {
			t.Fatal(err)
		}
		before := s.Calls(queuetest.OpChildren)
		res := goSeq(t, w, queue.Request{})
		await(t, s, "the waiter watches the holder", func() bool { return s.Watching(h.Path) > 0 })
		listed := s.Calls(queuetest.OpChildren) - before
		if want := 1 - round; listed != want { // a fresh handle asks for the count, then lists
			t.Fatalf("round %d: %d listings, want %d", round, listed, want)
		}
		if err := seqGive(t, holder, h); err != nil {
			t.Fatal(err)
		}
		if err := seqGive(t, w, holds(t, res)); err != nil {
			t.Fatal(err)
		}
	}
}
