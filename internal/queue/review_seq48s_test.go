package queue_test

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// Review 48s of the sequence layout (claims 1 and 3: mutual exclusion; no
// waiter takes a node named after the path's earlier life for a
// contender).
//
// TestReviewSeq48sRecoverAdoptsStaleNode: a contender whose handle still
// took the lock path's earlier life for current creates a node named
// after it (its create's first turn), learns the path's czxid from the
// reply and discards that node; the real Conn's Discard deletes "now if
// it can, and in the background until it is gone", so when the
// connection is down the node stands on. The create's next turn, under
// the czxid learnt, is cut off by connection loss; recovery lists the
// path and adopts the node that carries the create's token, which is the
// discarded one of the first turn (the token is drawn once per create,
// not once per turn). current() then compares the path's czxid with the
// turn's (learnt) czxid, not with the czxid in the adopted node's name, and
// keeps it. The wait filters the listing by the adopted node's prefix, so
// it sees only nodes of the path's earlier life: none is ahead, and it
// holds beside the rival that holds under the current czxid.
//
// The fake's Discard deletes at once, so the test re-creates the
// discarded node (same name, data and session) just before the next
// turn's create: the state of a real server while the Discard's delete
// is still pending. This is a fault injected into the fake; see the
// report for the real-server preconditions.
func TestReviewSeq48sRecoverAdoptsStaleNode(t *testing.T) {
	s, c := setup(t)
	ctx := testCtx(t)
	cy, cr := s.Connect(), s.Connect()
	y := seqQ(cy)

	// y learns the path's first life: it holds and releases.
	hy, err := y.Acquire(ctx, queue.Request{Data: []byte("y")})
	if err != nil {
		t.Fatal(err)
	}
	if err := seqGive(t, y, hy); err != nil {
		t.Fatal(err)
	}
	old := czxid(t, s, dir)
	if !s.Reap(dir) {
		t.Fatal("the empty lock path was not reaped")
	}
	// r re-creates the path (a new czxid) and holds.
	hr, err := seqQ(cr).Acquire(ctx, queue.Request{Data: []byte("r")})
	if err != nil {
		t.Fatal(err)
	}
	cur := czxid(t, s, dir)
	if cur == old || !strings.HasPrefix(hr.Path, dir+"/"+queue.SeqPrefix(cur)) {
		t.Fatalf("precondition: r holds %s; path czxid %x, earlier life %x", hr.Path, cur, old)
	}

	// y's next Lock: the first turn's create is named after the old czxid;
	// its Discard is seen (its node and data kept, as a delete still in
	// the background would keep them), and the next turn's create is lost
	// to a connection loss after the discarded node was put back.
	var stale string
	var staleData []byte
	cy.Inject(queuetest.OpDiscard, queuetest.Fault{Before: func() {
		for _, n := range s.List(dir) {
			if strings.HasPrefix(n, queue.SeqPrefix(old)) {
				stale = dir + "/" + n
				staleData, _, _ = s.Node(stale)
			}
		}
	}})
	cy.Inject(queuetest.OpCreate, queuetest.Fault{}) // the stale turn: applied
	cy.Inject(queuetest.OpCreate, queuetest.Fault{
		Path: dir + "/" + queue.SeqPrefix(cur),
		Before: func() {
			if stale == "" {
				return
			}
			if _, _, err := cy.CreateEphemeral(context.Background(), stale, staleData); err != nil {
				t.Errorf("putting the discarded node back: %v", err)
			}
		},
		Lost: true, // the caller gets client.ErrConnectionLoss
	})
	res := goSeq(t, y, queue.Request{Data: []byte("y")})

	// y must wait behind r (watch r's node), never hold while r holds.
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		select {
		case got := <-res:
			if got.err == nil {
				t.Fatalf("y was granted %s while r holds %s (path czxid %x; y's node is named after the earlier life %x); children %v",
					got.h.Path, hr.Path, cur, old, s.List(dir))
			}
			t.Fatalf("y's Lock returned %v, want it to wait behind r", got.err)
		default:
		}
		if slices.Contains(watchesBy(s, cy.SessionID()), hr.Path) {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	if stale == "" {
		t.Fatalf("precondition: y's first turn made no node named after the earlier life (creates %v)", created(s, cy.SessionID(), dir))
	}
	if !slices.Contains(watchesBy(s, cy.SessionID()), hr.Path) {
		t.Fatalf("y neither held nor watched r's node %s within 3s; children %v", hr.Path, s.List(dir))
	}
	consumed(t, cy)
	if err := seqGive(t, seqQ(cr), hr); err != nil {
		t.Fatal(err)
	}
	h := holds(t, res)
	if !strings.HasPrefix(h.Path, dir+"/"+queue.SeqPrefix(cur)) {
		t.Errorf("y holds %s, not named after the path's czxid %x", h.Path, cur)
	}
	if err := seqGive(t, y, h); err != nil {
		t.Fatal(err)
	}
	// The discarded node the test put back stands for a delete still
	// pending on a real server: it completes.
	if err := cy.Delete(ctx, stale); err != nil {
		t.Fatal(err)
	}
	noNodes(t, s, c.SessionID(), cy.SessionID(), cr.SessionID())
}

// TestReviewSeq48sBreakAndStateSkipStaleNode: a node named after the lock
// path's earlier czxid (a contender's that took the earlier life for
// current, standing until it learns better) is no contender: the waiters
// ignore it (sameLock). An operator's view must too: ReadState (behind
// Contenders and the CLI) must not report it as the holder, and Break
// must delete the holder's node, not it. Here it has the lowest number,
// as it has when its create re-created the reaped path.
func TestReviewSeq48sBreakAndStateSkipStaleNode(t *testing.T) {
	s, c := setup(t)
	ctx := testCtx(t)
	old := czxid(t, s, dir)
	if !s.Reap(dir) {
		t.Fatal("the empty lock path was not reaped")
	}
	cr, cy := s.Connect(), s.Connect()
	// y re-creates the path and makes the first node, under the earlier
	// czxid; then r holds under the new one.
	for _, d := range append(queue.Parents(dir), dir) {
		if err := cy.CreateContainer(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	stale, _, _, err := cy.CreateSeq(ctx, dir+"/"+queue.SeqPrefix(old), []byte("y"))
	if err != nil {
		t.Fatal(err)
	}
	hr, err := seqQ(cr).Acquire(ctx, queue.Request{Data: []byte("r")})
	if err != nil {
		t.Fatal(err)
	}
	cur := czxid(t, s, dir)
	sc, _ := queue.Parse(stale[len(dir)+1:])
	rc, _ := queue.Parse(hr.Path[len(dir)+1:])
	if cur == old || sc.Seq >= rc.Seq {
		t.Fatalf("precondition: stale %s, r holds %s (czxid %x)", stale, hr.Path, cur)
	}
	st, err := queue.ReadState(ctx, c, dir, "")
	if err != nil {
		t.Fatal(err)
	}
	var holders []string
	for _, n := range st.Holders {
		holders = append(holders, n.Path)
	}
	if !slices.Equal(holders, []string{hr.Path}) {
		t.Errorf("ReadState while r holds %s beside the stale node %s: holders %v", hr.Path, stale, holders)
	}
	broken, err := queue.Break(ctx, c, dir, true)
	var names []string
	for _, e := range broken {
		names = append(names, dir+"/"+e.Name)
	}
	if err != nil || !slices.Equal(names, []string{hr.Path}) || s.Exists(hr.Path) {
		t.Errorf("Break while r holds %s beside the stale node %s: broke %v (%v); r's node stands: %v; children %v",
			hr.Path, stale, names, err, s.Exists(hr.Path), s.List(dir))
	}
}
