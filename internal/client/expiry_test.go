package client_test

import (
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// TestSessionExpiry: when the server has expired the session
// (zktest.ExpireSession), the client is told on reconnect (StateExpired),
// every watch, one-shot and persistent, ends with ErrSessionExpired, a
// request queued for the old session fails with ErrSessionExpired, and
// the client goes on with a new session (StateConnected, a new id) in
// which requests work; the old session's ephemeral node is gone.
func TestSessionExpiry(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	var mu sync.Mutex
	ended := 0
	c := dial(t, p.Addrs(), client.Config{Timeout: time.Second, OnState: st.on, OnWatch: func(ev client.Event) {
		if ev.Type == client.EventNotWatching && errors.Is(ev.Err, client.ErrSessionExpired) {
			mu.Lock()
			ended++
			mu.Unlock()
		}
	}})
	ctx := bounded(t)
	dir := root(t, c)
	old := c.SessionID()
	if _, _, err := c.Create(ctx, dir+"/eph", nil, client.ModeEphemeral, open); err != nil {
		t.Fatal(err)
	}
	_, _, dw, err := c.GetW(ctx, dir+"/eph")
	if err != nil {
		t.Fatal(err)
	}
	_, _, cw, err := c.ChildrenW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	pw, err := c.AddWatch(ctx, dir, true)
	if err != nil {
		t.Fatal(err)
	}

	p.Blackhole()
	st.wait(t, client.StateDisconnected, 1)
	queued := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, dir)
		queued <- err
	}()
	waitQueued(t, c, 1)
	if err := zktest.ExpireSession(ctx, shared, p, old); err != nil {
		t.Fatal(err)
	}
	st.wait(t, client.StateExpired, 1)
	if info, _ := st.last(client.StateExpired); info.SessionID != old {
		t.Fatalf("expired session 0x%x, want 0x%x", info.SessionID, old)
	}
	if err := <-queued; !errors.Is(err, client.ErrSessionExpired) {
		t.Fatalf("request queued for the expired session: %v", err)
	}
	for _, w := range []*client.Watch{dw, cw, pw} {
		ev := next(t, w)
		if ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrSessionExpired) || ev.Watched != w.Path() || ev.Kind != w.Kind() {
			t.Fatalf("watch on %s at expiry: %+v", w.Path(), ev)
		}
		if _, err := w.Next(ctx); !errors.Is(err, client.ErrWatchEnded) {
			t.Fatalf("watch on %s after its end: %v", w.Path(), err)
		}
	}
	st.wait(t, client.StateConnected, 2)
	info, _ := st.last(client.StateConnected)
	if info.SessionID == old || info.SessionID == 0 || c.SessionID() != info.SessionID {
		t.Fatalf("new session 0x%x (client says 0x%x), old 0x%x", info.SessionID, c.SessionID(), old)
	}
	if _, ok, err := c.Exists(ctx, dir+"/eph"); err != nil || ok {
		t.Fatalf("the expired session's ephemeral node: %v %v", ok, err)
	}
	// OnWatch is called right after each event is queued, and before
	// StateConnected of the new session is reported.
	mu.Lock()
	defer mu.Unlock()
	if ended != 3 {
		t.Fatalf("OnWatch told %d watches of their end, want 3", ended)
	}
}
