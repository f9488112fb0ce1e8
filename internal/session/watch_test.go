package session

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// newWatchConn is a Conn with only what watches need: no server. Its
// watches are registered by hand, as arm would after a GetW.
func newWatchConn() *Conn {
	return &Conn{log: slog.New(slog.DiscardHandler), changed: make(chan struct{}),
		watches: map[string]*watch{}, childWaiters: map[string][]chan client.Event{}, done: make(chan struct{})}
}

// register puts a watch on path as arm leaves it.
func (c *Conn) register(path string, announces bool) *watch {
	c.mu.Lock()
	defer c.mu.Unlock()
	w := &watch{fired: make(chan struct{}), announces: announces}
	c.watches[path] = w
	return w
}

// waitAsync waits on path's watch, which must already be registered (so
// nothing is sent), as waitChange does once the watch is set, and delivers
// the outcome.
func waitAsync(t *testing.T, c *Conn, path string) <-chan Change {
	w, arm, changed := c.watchFor(path)
	if arm {
		t.Fatal("no watch registered")
	}
	out := make(chan Change, 1)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second) // bounds a broken test
	go func() {
		defer cancel()
		ch, err := c.await(ctx, w, changed, nil)
		if err != nil {
			ch = -1
		}
		out <- ch
	}()
	return out
}

// Node events reach the waiter through the OnWatch hook: a deletion is
// Deleted; a data change is Released on a node that announces releases and
// LookAgain on any other.
func TestWatchEvents(t *testing.T) {
	for _, tc := range []struct {
		ev        client.EventType
		announces bool
		want      Change
	}{
		{client.EventNodeDeleted, false, Deleted},
		{client.EventNodeDeleted, true, Deleted},
		{client.EventNodeDataChanged, true, Released},
		{client.EventNodeDataChanged, false, LookAgain},
		{client.EventNotWatching, true, LookAgain},
	} {
		c := newWatchConn()
		w := c.register("/l/n", tc.announces)
		got := waitAsync(t, c, "/l/n")
		c.onWatch(client.Event{Type: tc.ev, Path: "/l/n", Watched: "/l/n", Kind: client.WatchData})
		if ch := <-got; ch != tc.want {
			t.Fatalf("%v on a node (announces %v): %v, want %v", tc.ev, tc.announces, ch, tc.want)
		}
		if c.watches["/l/n"] == w {
			t.Fatal("a fired watch is still registered")
		}
	}
}

// Every state transition wakes the waiters (LookAgain) and forgets the
// watches, so that after a reconnect a waiter looks again and sets a new
// watch instead of trusting one the client restored alone.
func TestWatchStateChangeWakes(t *testing.T) {
	for _, st := range []State{StateSuspended, StateReconnected, StateLost} {
		c := newWatchConn()
		c.register("/l/n", true)
		got := waitAsync(t, c, "/l/n")
		c.mu.Lock()
		c.publishLocked(st, 1)
		empty := len(c.watches) == 0
		c.mu.Unlock()
		if !empty {
			t.Fatalf("%v left watches registered", st)
		}
		if ch := <-got; ch != LookAgain {
			t.Fatalf("%v: waiter got %v, want LookAgain", st, ch)
		}
	}
}

// A ChildrenW waiter is woken by its path's child events (and its
// deletion), not by another path's, nor by a data watch's event on its
// path, and by any state transition: a child watch restored after a
// reconnect is not trusted alone.
func TestChildWaiters(t *testing.T) {
	c := newWatchConn()
	reg := func(path string) chan client.Event {
		ch := make(chan client.Event, 1)
		c.mu.Lock()
		c.childWaiters[path] = append(c.childWaiters[path], ch)
		c.mu.Unlock()
		return ch
	}
	woken := func(ch chan client.Event) bool {
		select {
		case <-ch:
			return true
		default:
			return false
		}
	}
	a, b, gone := reg("/a"), reg("/b"), reg("/gone")
	c.onWatch(client.Event{Type: client.EventNodeChildrenChanged, Path: "/a", Watched: "/a", Kind: client.WatchChildren})
	c.onWatch(client.Event{Type: client.EventNodeDeleted, Path: "/gone", Watched: "/gone", Kind: client.WatchChildren})
	c.onWatch(client.Event{Type: client.EventNodeDataChanged, Path: "/b", Watched: "/b", Kind: client.WatchData})
	c.onWatch(client.Event{Type: client.EventNodeDeleted, Path: "/b", Watched: "/b", Kind: client.WatchData})
	if !woken(a) || !woken(gone) || woken(b) {
		t.Fatal("child events woke the wrong waiters")
	}
	c.mu.Lock()
	c.publishLocked(StateSuspended, 1)
	c.mu.Unlock()
	if !woken(b) {
		t.Fatal("a state transition did not wake a child waiter")
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.childWaiters) != 0 {
		t.Fatalf("waiters left registered: %v", c.childWaiters)
	}
}
