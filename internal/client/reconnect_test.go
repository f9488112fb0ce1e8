package client_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// TestReconnectStorm: 100 forced reconnects (TCP resets, each once the
// connection has served a request) of one session
// with watches of every kind registered and requests in flight from four
// goroutines, under the race detector. Every reconnect resumes the same
// session; no watch fires spuriously (setWatches carries the last zxid
// read); afterwards the server holds every watch again and each fires on
// its change.
func TestReconnectStorm(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	// Each connection is reset once it has served one request, within
	// milliseconds: a connection that short is a failed attempt for the
	// reconnect pacing, which would pause up to 1s (the default
	// MaxReconnectDelay) before each of the 100 reconnects. The storm
	// tests resumption, not pacing (TestReviewBreak_PingThenDropReconnectLoop
	// does): a low MaxReconnectDelay keeps it quick.
	c := dial(t, p.Addrs(), client.Config{OnState: st.on, MaxReconnectDelay: 20 * time.Millisecond})
	other := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	sid := c.SessionID()

	type watched struct {
		w    *client.Watch
		fire func() error
		typ  client.EventType
	}
	busy := dir + "/busy"
	if _, _, err := c.Create(ctx, busy, nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	var ws []watched
	for i := range 5 {
		n := fmt.Sprintf("%s/data%d", dir, i)
		if _, _, err := c.Create(ctx, n, nil, client.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
		_, _, w, err := c.GetW(ctx, n)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, watched{w, func() error { _, err := other.Set(ctx, n, []byte("x"), -1); return err }, client.EventNodeDataChanged})
		m := fmt.Sprintf("%s/missing%d", dir, i)
		_, _, w, err = c.ExistsW(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		ws = append(ws, watched{w, func() error { _, _, err := other.Create(ctx, m, nil, client.ModePersistent, open); return err }, client.EventNodeCreated})
	}
	_, _, cw, err := c.ChildrenW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	ws = append(ws, watched{cw, nil, client.EventNodeChildrenChanged}) // fired by the creates above
	pw, err := c.AddWatch(ctx, dir+"/data0", false)
	if err != nil {
		t.Fatal(err)
	}
	rw, err := c.AddWatch(ctx, dir+"/sub", true)
	if err != nil {
		t.Fatal(err)
	}

	// Traffic: requests in flight across the resets, on a node no watch
	// is on (busy), so that the zxid moves while connections come and go.
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var failures sync.Map
	for g := range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				var err error
				if g%2 == 0 {
					_, err = c.Set(ctx, busy, []byte{byte(g)}, -1)
				} else {
					_, _, err = c.Get(ctx, busy)
				}
				if err != nil && !errors.Is(err, client.ErrConnectionLoss) {
					failures.Store(err.Error(), true)
				}
			}
		}()
	}
	const resets = 100
	for i := range resets {
		n, _ := st.count(client.StateConnected)
		p.Reset()
		st.wait(t, client.StateConnected, n+1)
		if info, _ := st.last(client.StateConnected); info.SessionID != sid {
			t.Fatalf("reset %d: session 0x%x, want 0x%x", i, info.SessionID, sid)
		}
		// Reset once the connection has served: one reset before its
		// first reply counts as a failed attempt, and the next is paced
		// (TestAcceptThenDrop).
		if err := c.Sync(ctx, "/"); err != nil {
			t.Fatalf("reset %d: sync: %v", i, err)
		}
	}
	close(stop)
	wg.Wait()
	failures.Range(func(k, _ any) bool { t.Errorf("request failed other than by connection loss: %v", k); return true })
	if n, _ := st.count(client.StateExpired); n != 0 {
		t.Fatal("the session expired")
	}

	if err := c.Sync(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	for _, x := range append(ws, watched{w: pw}, watched{w: rw}) {
		if pending(x.w) {
			ev, _ := x.w.Next(ctx)
			t.Fatalf("watch on %s fired without a change: %+v", x.w.Path(), ev)
		}
	}
	held, err := shared.Watches(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// wchc lists each path once per session, child watches left out: the
	// data, exist and persistent watches.
	want := []string{dir + "/sub"}
	for i := range 5 {
		want = append(want, fmt.Sprintf("%s/data%d", dir, i), fmt.Sprintf("%s/missing%d", dir, i))
	}
	slices.Sort(want)
	slices.Sort(held[sid])
	if !slices.Equal(held[sid], want) {
		t.Fatalf("after the resets the server holds watches of the session on %v, want %v", held[sid], want)
	}
	for _, x := range ws {
		if x.fire != nil {
			if err := x.fire(); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, _, err := other.Create(ctx, dir+"/sub", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	for _, x := range ws {
		if ev := next(t, x.w); ev.Type != x.typ || ev.Watched != x.w.Path() {
			t.Fatalf("watch on %s got %+v, want %v", x.w.Path(), ev, x.typ)
		}
	}
	if ev := next(t, pw); ev.Type != client.EventNodeDataChanged {
		t.Fatalf("persistent watch: %+v", ev)
	}
	if ev := next(t, rw); ev.Type != client.EventNodeCreated || ev.Path != dir+"/sub" {
		t.Fatalf("recursive watch: %+v", ev)
	}
}

// TestWatchFiresForMissedChange: a change made while the client was
// disconnected fires the restored watch on reconnect (the server compares
// the node's zxids with the last zxid the client read), before any reply
// on the new connection.
func TestWatchFiresForMissedChange(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	// Each connection is reset once it has served one request, within
	// milliseconds: a connection that short is a failed attempt for the
	// reconnect pacing, which would pause up to 1s (the default
	// MaxReconnectDelay) before each of the 100 reconnects. The storm
	// tests resumption, not pacing (TestReviewBreak_PingThenDropReconnectLoop
	// does): a low MaxReconnectDelay keeps it quick.
	c := dial(t, p.Addrs(), client.Config{OnState: st.on, MaxReconnectDelay: 20 * time.Millisecond})
	other := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	for _, n := range []string{"/changed", "/deleted"} {
		if _, _, err := c.Create(ctx, dir+n, nil, client.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
	}
	_, _, changed, err := c.GetW(ctx, dir+"/changed")
	if err != nil {
		t.Fatal(err)
	}
	_, _, deleted, err := c.GetW(ctx, dir+"/deleted")
	if err != nil {
		t.Fatal(err)
	}
	_, _, kids, err := c.ChildrenW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	_, _, created, err := c.ExistsW(ctx, dir+"/created")
	if err != nil {
		t.Fatal(err)
	}
	p.Refuse(true)
	p.Reset()
	st.wait(t, client.StateDisconnected, 1)
	if _, err := other.Set(ctx, dir+"/changed", []byte("x"), -1); err != nil {
		t.Fatal(err)
	}
	if err := other.Delete(ctx, dir+"/deleted", -1); err != nil {
		t.Fatal(err)
	}
	if _, _, err := other.Create(ctx, dir+"/created", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	p.Refuse(false)
	// The first request on the new connection returns after the restored
	// watches' events: they are answered first.
	if _, _, err := c.Get(ctx, dir); err != nil {
		t.Fatal(err)
	}
	for _, x := range []struct {
		w   *client.Watch
		typ client.EventType
	}{{changed, client.EventNodeDataChanged}, {deleted, client.EventNodeDeleted}, {kids, client.EventNodeChildrenChanged}, {created, client.EventNodeCreated}} {
		if !pending(x.w) {
			t.Fatalf("watch on %s: no event after reconnect", x.w.Path())
		}
		if ev, _ := x.w.Next(context.Background()); ev.Type != x.typ {
			t.Fatalf("watch on %s: %+v, want %v", x.w.Path(), ev, x.typ)
		}
	}
}
