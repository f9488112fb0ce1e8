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

// The tests in package queue_test drive the queue through the in-memory
// ZooKeeper of queuetest. Nothing in them sleeps: a test that needs a
// contender to be blocked waits (bounded by testCtx) for the fake to show
// it blocked, for example watching its predecessor.

const dir = "/locks/l"

// setup returns a tree holding the lock path and a session on it.
func setup(t *testing.T) (*queuetest.Server, *queuetest.Conn) {
	t.Helper()
	s := queuetest.NewServer()
	c := s.Connect()
	for _, p := range append(queue.Parents(dir), dir) {
		if err := c.CreateContainer(t.Context(), p); err != nil {
			t.Fatal(err)
		}
	}
	return s, c
}

// testCtx bounds a test's blocking calls; a broken queue fails on it
// rather than hanging.
func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// await fails the test if cond does not come to hold.
func await(t *testing.T, s *queuetest.Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	if err := s.Await(ctx, cond); err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

func mutexQ(c queue.Conn) *queue.Queue {
	return &queue.Queue{Conn: c, Dir: dir, Rules: &queue.Rules{Kind: queue.KindLock, Accept: []string{queue.KindLock}}}
}

func rwQ(c queue.Conn, kind string) *queue.Queue {
	return &queue.Queue{Conn: c, Dir: dir, Rules: &queue.Rules{Kind: kind, Accept: []string{queue.KindRead, queue.KindWrite}}}
}

// reader is the read lock's Blocks: only writers block a reader.
func reader(c queue.Contender) bool { return c.Kind == queue.KindWrite }

type result struct {
	h   *queue.Held
	err error
}

// goAcquire runs q.Acquire on its own goroutine. At cleanup it cancels the
// acquisition and waits for it, so that no goroutine outlives the test.
func goAcquire(t *testing.T, q *queue.Queue, r queue.Request) <-chan result {
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

// acquire is a blocking Acquire that must succeed.
func acquire(t *testing.T, q *queue.Queue, r queue.Request) *queue.Held {
	t.Helper()
	h, err := q.Acquire(testCtx(t), r)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return h
}

// holds receives a result that must be a grant.
func holds(t *testing.T, ch <-chan result) *queue.Held {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Acquire: %v", r.err)
		}
		return r.h
	case <-testCtx(t).Done():
		t.Fatal("Acquire did not return")
		return nil
	}
}

// blocked asserts that an acquisition has not returned. It is called only
// once the fake shows the contender waiting, so no wait is needed.
func blocked(t *testing.T, ch <-chan result, who string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s returned (%v, %v) while it should wait", who, r.h, r.err)
	default:
	}
}

// newNode returns the one node under d that is not in known.
func newNode(t *testing.T, s *queuetest.Server, d string, known ...string) string {
	t.Helper()
	var out []string
	for _, n := range s.List(d) {
		if p := d + "/" + n; !slices.Contains(known, p) {
			out = append(out, p)
		}
	}
	if len(out) != 1 {
		t.Fatalf("new nodes under %s: %v, want one", d, out)
	}
	return out[0]
}

// watchesBy returns the paths session sid watched with WaitChange.
func watchesBy(s *queuetest.Server, sid int64) []string {
	var out []string
	for _, w := range s.Watches() {
		if w.Session == sid {
			out = append(out, w.Path)
		}
	}
	return out
}

// created returns the nodes session sid created under d, in order.
func created(s *queuetest.Server, sid int64, d string) []string {
	var out []string
	for _, c := range s.History() {
		if c.Created && c.Owner == sid && strings.HasPrefix(c.Path, d+"/") {
			out = append(out, c.Path)
		}
	}
	return out
}

// noNodes asserts that the sessions hold no node.
func noNodes(t *testing.T, s *queuetest.Server, sids ...int64) {
	t.Helper()
	for _, sid := range sids {
		if ns := s.Ephemerals(sid); len(ns) > 0 {
			t.Fatalf("session %d left %v", sid, ns)
		}
	}
}

// czxid returns p's czxid.
func czxid(t *testing.T, s *queuetest.Server, p string) int64 {
	t.Helper()
	_, st, ok := s.Node(p)
	if !ok {
		t.Fatalf("%s does not exist", p)
	}
	return st.Czxid
}

// consumed asserts that every injected fault was used: the test drove the
// queue down the path it meant to.
func consumed(t *testing.T, cs ...*queuetest.Conn) {
	t.Helper()
	for _, c := range cs {
		if n := c.Pending(); n > 0 {
			t.Fatalf("%d injected faults unused", n)
		}
	}
}
