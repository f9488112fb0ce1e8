package client_test

import (
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// TestEventBeforeLaterReply: the ordering guarantee. The server sends a
// watch's notification when it applies the change, before it answers any
// request it reads after; so once another client's write has returned, a
// request of the watching client returns only after the event is on its
// Watch, and OnWatch has run before OnReply saw that request's reply.
// Checked 200 times without waiting: an event delivered asynchronously
// would be found missing.
func TestEventBeforeLaterReply(t *testing.T) {
	var mu sync.Mutex
	var order []int32 // 0 for an event, else the opcode of a reply
	record := func(v int32) {
		mu.Lock()
		order = append(order, v)
		mu.Unlock()
	}
	c := dial(t, nil, client.Config{
		OnWatch: func(client.Event) { record(0) },
		OnReply: func(_, _ time.Time, _, op int32, _ int64, _ error) { record(op) },
	})
	other := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	p := dir + "/n"
	if _, _, err := c.Create(ctx, p, nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	const rounds = 200
	for i := range rounds {
		_, _, w, err := c.GetW(ctx, p)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := other.Set(ctx, p, nil, -1); err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Exists(ctx, p); err != nil {
			t.Fatal(err)
		}
		if !pending(w) {
			t.Fatalf("round %d: the exists after the write returned before the write's event was queued", i)
		}
		expect(t, next(t, w), client.EventNodeDataChanged, p, client.WatchData)
	}
	mu.Lock()
	defer mu.Unlock()
	events, exists := 0, 0
	for _, v := range order {
		switch v {
		case 0:
			events++
		case 3: // exists
			exists++
			if events != exists {
				t.Fatalf("OnReply saw exists reply %d after %d events", exists, events)
			}
		}
	}
	if exists != rounds {
		t.Fatalf("OnReply saw %d exists replies, want %d", exists, rounds)
	}
}
