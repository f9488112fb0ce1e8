package session

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
)

// newWatchConn is a Conn with only what watches need: no server. Its
// watches are registered by hand, as arm would after a GetW.
func newWatchConn() *Conn {
	return &Conn{log: slog.New(slog.DiscardHandler), changed: make(chan struct{}),
		watches: map[string]*watch{}, done: make(chan struct{})}
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
func waitAsync(t *testing.T, c *Conn, path string) <-chan queue.Change {
	w, arm, changed := c.watchFor(path)
	if arm {
		t.Fatal("no watch registered")
	}
	out := make(chan queue.Change, 1)
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

// Node events reach the waiter through the event callback: a deletion is
// Deleted; a data change is Released on a node that announces releases and
// LookAgain on any other.
func TestWatchEvents(t *testing.T) {
	for _, tc := range []struct {
		ev        zk.EventType
		announces bool
		want      queue.Change
	}{
		{zk.EventNodeDeleted, false, queue.Deleted},
		{zk.EventNodeDeleted, true, queue.Deleted},
		{zk.EventNodeDataChanged, true, queue.Released},
		{zk.EventNodeDataChanged, false, queue.LookAgain},
		{zk.EventNotWatching, true, queue.LookAgain},
	} {
		c := newWatchConn()
		w := c.register("/l/n", tc.announces)
		got := waitAsync(t, c, "/l/n")
		c.onEvent(zk.Event{Type: tc.ev, Path: "/l/n"})
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
// watch instead of trusting one go-zookeeper restored (its issue #83).
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
		if ch := <-got; ch != queue.LookAgain {
			t.Fatalf("%v: waiter got %v, want LookAgain", st, ch)
		}
	}
}
