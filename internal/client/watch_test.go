package client_test

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/zklock/zklock/internal/client"
)

// TestOneShotWatches: each kind fires once, on the change ZooKeeper
// defines for it, with the path and kind it was set on; every caller of
// the same (path, kind) gets the event; OnWatch sees each delivery.
func TestOneShotWatches(t *testing.T) {
	var mu sync.Mutex
	var hooked []client.Event
	c := dial(t, nil, client.Config{OnWatch: func(ev client.Event) {
		mu.Lock()
		hooked = append(hooked, ev)
		mu.Unlock()
	}})
	other := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	p := dir + "/n"

	_, ok, ew, err := c.ExistsW(ctx, p)
	if err != nil || ok || ew == nil || ew.Kind() != client.WatchExist {
		t.Fatalf("existsW on a missing node: %v %v %v", ok, ew, err)
	}
	if _, _, err := other.Create(ctx, p, nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	expect(t, next(t, ew), client.EventNodeCreated, p, client.WatchExist)
	if _, err := ew.Next(ctx); !errors.Is(err, client.ErrWatchEnded) {
		t.Fatalf("a fired one-shot watch: %v, want ErrWatchEnded", err)
	}

	_, _, d1, err := c.GetW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, d2, err := c.GetW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	_, ok, d3, err := c.ExistsW(ctx, p)
	if err != nil || !ok || d3.Kind() != client.WatchData {
		t.Fatalf("existsW on a node: %v %v %v", ok, d3, err)
	}
	_, _, cw, err := c.ChildrenW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := other.Set(ctx, p, []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	for _, w := range []*client.Watch{d1, d2, d3} {
		expect(t, next(t, w), client.EventNodeDataChanged, p, client.WatchData)
	}
	if _, _, err := other.Create(ctx, p+"/c", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	expect(t, next(t, cw), client.EventNodeChildrenChanged, p, client.WatchChildren)

	_, _, d4, err := c.GetW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, cw2, err := c.ChildrenW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, p+"/c", -1); err != nil {
		t.Fatal(err)
	}
	expect(t, next(t, cw2), client.EventNodeChildrenChanged, p, client.WatchChildren)
	_, _, cw3, err := c.ChildrenW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, p, -1); err != nil {
		t.Fatal(err)
	}
	expect(t, next(t, d4), client.EventNodeDeleted, p, client.WatchData)
	expect(t, next(t, cw3), client.EventNodeDeleted, p, client.WatchChildren)

	// No watch is set by a get or a listing of a missing node.
	if _, _, w, err := c.GetW(ctx, p); !errors.Is(err, client.ErrNoNode) || w != nil {
		t.Fatalf("getW on a missing node: %v %v", w, err)
	}
	if _, _, w, err := c.ChildrenW(ctx, p); !errors.Is(err, client.ErrNoNode) || w != nil {
		t.Fatalf("childrenW on a missing node: %v %v", w, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(hooked) != 8 {
		t.Fatalf("OnWatch saw %d deliveries, want 8: %+v", len(hooked), hooked)
	}
}

func expect(t testing.TB, ev client.Event, typ client.EventType, path string, kind client.WatchKind) {
	t.Helper()
	if ev.Type != typ || ev.Path != path || ev.Kind != kind || ev.Watched != path || ev.Err != nil {
		t.Fatalf("event %+v, want %v on %s (%v)", ev, typ, path, kind)
	}
}

// TestWatchRemove: removing one of two callers' watches keeps the
// server's watch for the other; removing the last removes it on the
// server (wchc no longer lists it) and ends the watch with ErrWatchRemoved.
func TestWatchRemove(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	p := dir + "/n"
	if _, _, err := c.Create(ctx, p, nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	_, _, a, err := c.GetW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	_, _, b, err := c.GetW(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	ev := next(t, a)
	if ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrWatchRemoved) {
		t.Fatalf("removed watch's event: %+v", ev)
	}
	if !serverWatches(t, c.SessionID(), p) {
		t.Fatal("the server's watch went with the first of its two callers")
	}
	if err := b.Remove(ctx); err != nil {
		t.Fatal(err)
	}
	if serverWatches(t, c.SessionID(), p) {
		t.Fatal("the server kept the watch after its last caller removed it")
	}
	if _, err := c.Set(ctx, p, nil, -1); err != nil {
		t.Fatal(err)
	}
	if ev := next(t, b); ev.Type != client.EventNotWatching {
		t.Fatalf("removed watch got %+v", ev)
	}
	if _, err := b.Next(ctx); !errors.Is(err, client.ErrWatchEnded) {
		t.Fatalf("after its final event: %v", err)
	}
}

// serverWatches reports whether the server lists a data or exist watch of
// session sid on path (wchc).
func serverWatches(t testing.TB, sid int64, path string) bool {
	t.Helper()
	ws, err := shared.Watches(bounded(t))
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range ws[sid] {
		if p == path {
			return true
		}
	}
	return false
}

// TestWatchNextCancel: Next returns ctx's error when ctx ends first, and
// the watch still delivers afterwards.
func TestWatchNextCancel(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	_, _, w, err := c.ChildrenW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := w.Next(short); !errors.Is(err, context.Canceled) {
		t.Fatalf("Next with a cancelled ctx: %v", err)
	}
	if _, _, err := c.Create(ctx, dir+"/x", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	expect(t, next(t, w), client.EventNodeChildrenChanged, dir, client.WatchChildren)
}
