package client

import (
	"context"
	"fmt"
	"sync"
)

// EventType is what happened to a watched node (Watcher.Event.EventType),
// or EventNotWatching.
type EventType int32

// The event types.
const (
	EventNodeCreated         EventType = 1
	EventNodeDeleted         EventType = 2
	EventNodeDataChanged     EventType = 3
	EventNodeChildrenChanged EventType = 4
	// EventNotWatching ends a watch without a change of its node: the
	// session expired, the client closed, or the watch was removed.
	// Event.Err says which. Whoever waited on the watch must look again.
	EventNotWatching EventType = -2
)

func (t EventType) String() string {
	switch t {
	case EventNodeCreated:
		return "created"
	case EventNodeDeleted:
		return "deleted"
	case EventNodeDataChanged:
		return "data changed"
	case EventNodeChildrenChanged:
		return "children changed"
	case EventNotWatching:
		return "not watching"
	}
	return fmt.Sprintf("EventType(%d)", int32(t))
}

// WatchKind is what a watch is set on. The server keeps one watch per
// session, path and kind, and so does the client: every caller that sets
// the same kind of watch on the same path shares the server's watch, and
// each gets the event.
type WatchKind uint8

// The watch kinds.
const (
	// WatchData: set by GetW, or by ExistsW on a node that exists. Fires
	// once, when the node's data changes or the node is deleted.
	WatchData WatchKind = iota + 1
	// WatchExist: set by ExistsW on a node that does not exist. Fires
	// once, when the node is created.
	WatchExist
	// WatchChildren: set by ChildrenW. Fires once, when a child is added
	// or removed or the node is deleted.
	WatchChildren
	// WatchPersistent: set by AddWatch. Fires on every change of the
	// node's data, its creation and deletion, and its children, until
	// removed (ZooKeeper 3.6 and later).
	WatchPersistent
	// WatchPersistentRecursive: set by AddWatch. Fires on the creation,
	// deletion and data change of the node and every node below it (not
	// on child list changes), until removed.
	WatchPersistentRecursive
)

var kindNames = [...]string{"", "data", "exist", "children", "persistent", "persistent recursive"}

func (k WatchKind) String() string {
	if int(k) < len(kindNames) && k > 0 {
		return kindNames[k]
	}
	return fmt.Sprintf("WatchKind(%d)", uint8(k))
}

// Event is one event of a watch.
type Event struct {
	Type EventType
	// Path is the node the event is about: the watched path, or a node
	// below it for a recursive watch.
	Path string
	// Watched and Kind identify the watch the event is delivered to.
	Watched string
	Kind    WatchKind
	// Err is why a watch ended without a change (EventNotWatching):
	// ErrSessionExpired, ErrClosed, ErrAuthFailed or ErrWatchRemoved.
	Err error
}

// Watch is one caller's registration of a watch, and the queue of its
// events. A one-shot watch (WatchData, WatchExist, WatchChildren) gets
// exactly one event: its trigger, or EventNotWatching. A persistent watch
// gets every event until its final EventNotWatching. Events are queued
// without bound and never dropped; a Watch is safe for concurrent use.
//
// Ordering: an event is queued before the reply of any request that the
// server answered after sending the event is returned to its caller; so a
// caller whose later request has returned can look at the watch without
// waiting for an event already sent.
type Watch struct {
	c    *Client
	path string
	kind WatchKind

	mu     sync.Mutex
	q      []Event
	ended  bool          // the final event has been queued
	ready  chan struct{} // closed while q is not empty or the watch has ended
	linked bool          // registered (guarded by the registry's lock)
}

func newWatch(c *Client, path string, kind WatchKind) *Watch {
	return &Watch{c: c, path: path, kind: kind, ready: make(chan struct{})}
}

// Path returns the watched path.
func (w *Watch) Path() string { return w.path }

// Kind returns the watch's kind.
func (w *Watch) Kind() WatchKind { return w.kind }

// Ready returns a channel that is closed while an event is queued or the
// watch has ended: a caller selects on it, then calls Next. The channel
// returned may change after each Next.
func (w *Watch) Ready() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.ready
}

// Next returns the watch's next event, waiting until there is one or ctx
// ends (then it returns ctx.Err()). After the final event it returns
// ErrWatchEnded.
func (w *Watch) Next(ctx context.Context) (Event, error) {
	for {
		w.mu.Lock()
		if len(w.q) > 0 {
			ev := w.q[0]
			w.q[0] = Event{}
			w.q = w.q[1:]
			if len(w.q) == 0 && !w.ended {
				w.ready = make(chan struct{})
			}
			w.mu.Unlock()
			return ev, nil
		}
		if w.ended {
			w.mu.Unlock()
			return Event{}, ErrWatchEnded
		}
		ready := w.ready
		w.mu.Unlock()
		select {
		case <-ready:
		case <-ctx.Done():
			return Event{}, ctx.Err()
		}
	}
}

// push queues ev, unless the watch has ended; final marks it the last.
// It reports whether ev was queued.
func (w *Watch) push(ev Event, final bool) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.ended {
		return false
	}
	if len(w.q) == 0 {
		close(w.ready)
	}
	w.q = append(w.q, ev)
	w.ended = final
	return true
}

// Remove ends the watch for this caller: its final event, EventNotWatching
// with ErrWatchRemoved, is queued unless it had ended. When no other
// caller shares the server's watch, the server is asked to remove it too
// (removeWatches, ZooKeeper 3.5 and later); ctx bounds that request, whose
// failure is returned (the watch has ended for the caller all the same,
// and a server's watch that outlives it fires into nothing). Remove of an
// ended watch does nothing.
func (w *Watch) Remove(ctx context.Context) error {
	typ, ok := w.c.reg.unlink(w)
	w.push(Event{Type: EventNotWatching, Path: w.path, Watched: w.path, Kind: w.kind, Err: ErrWatchRemoved}, true)
	if !ok {
		return nil
	}
	return w.c.removeWatches(ctx, w.path, typ)
}
