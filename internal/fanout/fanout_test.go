package fanout

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

const final = -1

func newHub() *Hub[int] { return New(func(e int) bool { return e == final }) }

// recv reads one event, failing after a bound.
func recv(t *testing.T, ch <-chan int) (int, bool) {
	t.Helper()
	select {
	case ev, ok := <-ch:
		return ev, ok
	case <-time.After(10 * time.Second):
		t.Fatal("no event within 10s")
		return 0, false
	}
}

// A subscriber that reads nothing while many events are published delays
// no publish, and later reads every one, in order, then the final event
// and the channel's close.
func TestSlowSubscriberDropsNothingAndBlocksNoPublish(t *testing.T) {
	h := newHub()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	slow := h.Subscribe(ctx)
	const n = 10000
	done := make(chan struct{})
	go func() {
		defer close(done)
		for i := 0; i < n; i++ {
			h.Publish(i)
		}
		h.Publish(final)
		h.Publish(n) // after the final event: ignored
	}()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Publish waited for a subscriber that does not read")
	}
	for i := 0; i < n; i++ {
		ev, ok := recv(t, slow)
		if !ok || ev != i {
			t.Fatalf("event %d: got %d (open %v)", i, ev, ok)
		}
	}
	if ev, ok := recv(t, slow); !ok || ev != final {
		t.Fatalf("want the final event, got %d (open %v)", ev, ok)
	}
	if ev, ok := recv(t, slow); ok {
		t.Fatalf("channel still open after the final event: got %d", ev)
	}
}

// A subscriber whose ctx ends has its channel closed and is forgotten;
// the others go on receiving.
func TestContextEndClosesAndUnsubscribes(t *testing.T) {
	h := newHub()
	ctx, cancel := context.WithCancel(context.Background())
	gone := h.Subscribe(ctx)
	stay := h.Subscribe(context.Background())
	h.Publish(1)
	cancel()
	for i := 0; ; i++ { // the queued 1 may or may not be delivered first
		ev, ok := recv(t, gone)
		if !ok {
			break
		}
		if ev != 1 || i > 0 {
			t.Fatalf("unexpected event %d after cancel", ev)
		}
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		h.mu.Lock()
		n := len(h.subs)
		h.mu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d subscribers remain, want 1", n)
		}
		time.Sleep(time.Millisecond)
	}
	h.Publish(2)
	h.Publish(final)
	for _, want := range []int{1, 2, final} {
		if ev, ok := recv(t, stay); !ok || ev != want {
			t.Fatalf("got %d (open %v), want %d", ev, ok, want)
		}
	}
	if _, ok := recv(t, stay); ok {
		t.Fatal("channel open after the final event")
	}
}

// Subscribing after the final event yields it alone, then the close.
func TestLateSubscriberGetsTheFinalEvent(t *testing.T) {
	h := newHub()
	h.Publish(7)
	h.Publish(final)
	ch := h.Subscribe(context.Background())
	if ev, ok := recv(t, ch); !ok || ev != final {
		t.Fatalf("got %d (open %v), want the final event", ev, ok)
	}
	if _, ok := recv(t, ch); ok {
		t.Fatal("channel open after the final event")
	}
}
