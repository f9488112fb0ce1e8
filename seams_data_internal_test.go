package zklock

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// Finding 5 of issue 34: protocol state cannot be forged by user data. A
// cohort's node and an election candidate's keep their data verbatim, so
// data ending in a tag zklock appends would make them look announcing (or
// ranking), and a data write on them (the cohort's guard bump, a
// revocation request) a release. Such data is refused: WithData with
// ErrInvalidArgument, and so is Campaign's value.
func TestForgedProtocolData(t *testing.T) {
	for _, forged := range []string{queue.Announcer, queue.PermitTag + "7", queue.PermitTag} {
		t.Run(fmt.Sprintf("cohort %q", forged), func(t *testing.T) { forgedCohort(t, []byte("x"+forged)) })
		t.Run(fmt.Sprintf("election %q", forged), func(t *testing.T) { forgedCandidate(t, []byte("x"+forged)) })
	}
}

func forgedCohort(t *testing.T, data []byte) {
	const path = "/seams/m"
	srv := queuetest.NewServer()
	a, r := srv.Connect(), srv.Connect()
	ctx := fakeCtx(t)
	fs := fakeSession()
	opts := []Option{WithCohort(0, time.Hour), WithData(data)}
	if _, err := NewMutex(fs, path, opts...); err != nil {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("NewMutex with data %q: %v, want ErrInvalidArgument", data, err)
		}
		return
	}
	m1, m2 := fakeMutex(t, fs, a, path, opts...), fakeMutex(t, fs, a, path, opts...)
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(m1.Guard())
	m1.Guard() // the next local grant bumps the node's data version
	m2got := goErr(t, func() error { return m2.Lock(ctx) })
	poll(t, "m2 waits in the cohort", func() bool { return CohortWaiters(fs, path) == 1 })
	rch := goHeld(t, plainQ(r, path, queue.KindLock))
	awaitFake(t, srv, "R waits for the cohort's node", func() bool { return watchesSet(srv, r, node) == 1 })
	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-m2got; err != nil {
		t.Fatal(err)
	}
	awaitFake(t, srv, "R holds, or waits for the cohort's node again", func() bool {
		return len(r.Tracked()) > 0 || watchesSet(srv, r, node) == 2
	})
	if len(r.Tracked()) > 0 {
		t.Fatalf("R holds beside the cohort's local holder: the cohort's data %q forged an announcement", data)
	}
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	<-rch
}

func forgedCandidate(t *testing.T, value []byte) {
	const path = "/seams/e"
	srv := queuetest.NewServer()
	a, w := srv.Connect(), srv.Connect()
	ctx := fakeCtx(t)
	e, err := NewElection(fakeSession(), path)
	if err != nil {
		t.Fatal(err)
	}
	e.q.Conn = a
	term, err := e.Campaign(ctx, value)
	if err != nil {
		if !errors.Is(err, ErrInvalidArgument) {
			t.Fatalf("Campaign with value %q: %v, want ErrInvalidArgument", value, err)
		}
		return
	}
	wq := plainQ(w, path, queue.KindLock) // a Mutex shares an election's queue
	wch := goHeld(t, wq)
	awaitFake(t, srv, "W waits for the leader's node", func() bool { return watchesSet(srv, w, nodeOf(term.Guard())) == 1 })
	if err := srv.SetData(nodeOf(term.Guard()), []byte(revokeMessage)); err != nil { // Curator's Revoker
		t.Fatal(err)
	}
	awaitFake(t, srv, "W holds, or waits for the leader's node again", func() bool {
		return len(w.Tracked()) > 0 || watchesSet(srv, w, nodeOf(term.Guard())) == 2
	})
	if len(w.Tracked()) > 0 {
		t.Fatalf("W holds while the candidate leads (term lost: %v): its value %q forged an announcement",
			closed(term.Lost()), value)
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if h := <-wch; h != nil {
		if err := wq.Release(ctx, h); err != nil {
			t.Fatal(err)
		}
	}
}
