package zklock

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// The internal tests that use these helpers run the primitives on the
// in-memory server of queuetest, to pin the seams between features
// deterministically: a Session with no connection (its metrics are off,
// and nothing else of it is used), whose handles' queues are pointed at a
// queuetest Conn. They wait on conditions (the fake server's Await, or a
// poll of in-memory state), never for time to pass; a bound (WithMaxHold)
// passes when the test fires its timer.

// fakeSession returns a Session for handles on the in-memory server.
func fakeSession() *Session {
	return &Session{opts: defaultSessionOptions(), done: make(chan struct{})}
}

func fakeMutex(t *testing.T, s *Session, c *queuetest.Conn, path string, opts ...Option) *Mutex {
	t.Helper()
	m, err := NewMutex(s, path, opts...)
	if err != nil {
		t.Fatalf("NewMutex: %v", err)
	}
	m.q.Conn = c
	return m
}

func fakeRW(t *testing.T, s *Session, c *queuetest.Conn, path string, opts ...Option) *RWMutex {
	t.Helper()
	m, err := NewRWMutex(s, path, opts...)
	if err != nil {
		t.Fatalf("NewRWMutex: %v", err)
	}
	m.rq.Conn, m.q.Conn = c, c
	return m
}

// plainQ is the queue of a plain exclusive contender of kind on path, as a
// Mutex or an RWMutex writer of another process makes it.
func plainQ(c queue.Conn, path, kind string) *queue.Queue {
	accept := []string{queue.KindLock, queue.KindKazooLock}
	if kind != queue.KindLock {
		accept = rwKinds
	}
	return &queue.Queue{Conn: c, Dir: path, Rules: &queue.Rules{Kind: kind, Accept: accept, OneKind: true, Handoff: true}}
}

// watchesSet counts the data watches c's session has set on path so far.
func watchesSet(s *queuetest.Server, c *queuetest.Conn, path string) int {
	n := 0
	for _, w := range s.Watches() {
		if w.Session == c.SessionID() && w.Path == path {
			n++
		}
	}
	return n
}

// fakeCtx bounds a test's blocking calls.
func fakeCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// fakeCtxFor is fakeCtx with a bound of d.
func fakeCtxFor(t *testing.T, d time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), d)
	t.Cleanup(cancel)
	return ctx
}

// awaitFake fails the test if cond does not come to hold; cond is looked at
// after every change of the fake server's state.
func awaitFake(t *testing.T, s *queuetest.Server, what string, cond func() bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	if err := s.Await(ctx, cond); err != nil {
		t.Fatalf("timed out waiting until %s", what)
	}
}

// poll fails the test if cond, which reads in-memory state the fake server
// does not see change, does not come to hold within 10s.
func poll(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting until %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// goErr runs f on a goroutine and delivers its error; at cleanup it waits
// for f, so that no goroutine outlives the test.
func goErr(t *testing.T, f func() error) <-chan error {
	out := make(chan error, 1)
	done := make(chan struct{})
	go func() { defer close(done); out <- f() }()
	t.Cleanup(func() { <-done })
	return out
}

// goHeld runs q.Acquire on a goroutine, cancelled at cleanup.
func goHeld(t *testing.T, q *queue.Queue) <-chan *queue.Held {
	ctx, cancel := context.WithCancel(fakeCtx(t))
	out := make(chan *queue.Held, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		h, _ := q.Acquire(ctx, queue.Request{})
		out <- h
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out
}

// eitherOr waits until ch delivers (then it returns true with what it
// delivered) or cond holds on the fake server (false).
func eitherOr[T any](t *testing.T, s *queuetest.Server, what string, ch <-chan T, cond func() bool) (T, bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	met := make(chan error, 1)
	go func() { met <- s.Await(ctx, cond) }()
	var zero T
	select {
	case v := <-ch:
		cancel()
		<-met
		return v, true
	case err := <-met:
		cancel()
		if err != nil {
			t.Fatalf("timed out waiting until %s", what)
		}
		return zero, false
	}
}

// bounds hands out the timers of max holds (WithMaxHold) for the test to
// fire: each bound passes only when the test says so. A hold's timer is
// started by its watch's goroutine, a moment after the grant.
type bounds struct {
	mu  sync.Mutex
	chs []chan time.Time // in the order the timers were started
}

// newBounds makes every max hold's timer b's until the test ends.
func newBounds(t *testing.T) *bounds {
	b := &bounds{}
	prev := hold.BoundTimer
	hold.BoundTimer = func(time.Duration) (<-chan time.Time, func() bool) {
		ch := make(chan time.Time, 1)
		b.mu.Lock()
		b.chs = append(b.chs, ch)
		b.mu.Unlock()
		return ch, func() bool { return true }
	}
	t.Cleanup(func() { hold.BoundTimer = prev })
	return b
}

// started waits until n timers have been started.
func (b *bounds) started(t *testing.T, n int) {
	t.Helper()
	poll(t, fmt.Sprintf("%d max holds started", n), func() bool {
		b.mu.Lock()
		defer b.mu.Unlock()
		return len(b.chs) >= n
	})
}

// pass passes the i-th bound started.
func (b *bounds) pass(t *testing.T, i int) {
	t.Helper()
	b.started(t, i+1)
	b.mu.Lock()
	ch := b.chs[i]
	b.mu.Unlock()
	ch <- time.Now()
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}
