package zk

import (
	"context"
	"fmt"
	"sync"

	"github.com/zklock/zklock/internal/client"
)

// ExistsW is Exists that also sets a watch: on the node's deletion or data
// change if it exists, on its creation if not.
func (c *Client) ExistsW(ctx context.Context, path string) (Stat, bool, *Watch, error) {
	if err := c.check(ctx); err != nil {
		return Stat{}, false, nil, err
	}
	st, ok, w, err := c.cl().ExistsW(ctx, path)
	if err != nil {
		return Stat{}, false, nil, publicErr(err)
	}
	return fromClientStat(st), ok, &Watch{w: w}, nil
}

// GetW is Get that also sets a watch on the node's data change or
// deletion.
func (c *Client) GetW(ctx context.Context, path string) ([]byte, Stat, *Watch, error) {
	if err := c.check(ctx); err != nil {
		return nil, Stat{}, nil, err
	}
	data, st, w, err := c.cl().GetW(ctx, path)
	if err != nil {
		return nil, Stat{}, nil, publicErr(err)
	}
	return data, fromClientStat(st), &Watch{w: w}, nil
}

// ChildrenW is Children that also sets a watch on a change of the node's
// children, or its deletion.
func (c *Client) ChildrenW(ctx context.Context, path string) ([]string, Stat, *Watch, error) {
	if err := c.check(ctx); err != nil {
		return nil, Stat{}, nil, err
	}
	names, st, w, err := c.cl().ChildrenW(ctx, path)
	if err != nil {
		return nil, Stat{}, nil, publicErr(err)
	}
	return names, fromClientStat(st), &Watch{w: w}, nil
}

// Watch is a one-shot ZooKeeper watch set by Client.ExistsW, GetW or
// ChildrenW: it fires once, with the change it was set for, or ends
// without one (NodeWatchEnded: the ZooKeeper session expired or the
// Session closed). No event is ever dropped. The server keeps the watch
// across reconnects of the same ZooKeeper session, and fires it at once on
// reconnect if its node changed meanwhile. A Watch is safe for concurrent
// use; a zero Watch is ended, and its Remove returns ErrInvalidArgument.
type Watch struct {
	w    *client.Watch
	once sync.Once
	ev   NodeEvent
}

// Done returns a channel that is closed once the watch has fired or
// ended; Event then tells what happened.
func (w *Watch) Done() <-chan struct{} {
	if w.unmade() {
		return closed
	}
	return w.w.Ready()
}

// unmade reports that no Client made w: such a Watch is ended (Done
// closed, Event NodeWatchEnded with ErrInvalidArgument), and Remove
// returns ErrInvalidArgument, rather than dereference nil.
func (w *Watch) unmade() bool { return w == nil || w.w == nil }

var (
	errUnmadeWatch = fmt.Errorf("%w: zero zk.Watch: get it from Client.ExistsW, GetW or ChildrenW", ErrInvalidArgument)
	closed         = func() chan struct{} { c := make(chan struct{}); close(c); return c }()
)

// Event returns what fired the watch, once Done is closed; before, the
// zero NodeEvent.
func (w *Watch) Event() NodeEvent {
	if w.unmade() {
		return NodeEvent{Type: NodeWatchEnded, Err: errUnmadeWatch}
	}
	select {
	case <-w.w.Ready():
	default:
		return NodeEvent{}
	}
	w.once.Do(func() {
		ev, err := w.w.Next(context.Background()) // ready: returns at once
		if err != nil {
			w.ev = NodeEvent{Type: NodeWatchEnded, Path: w.w.Path(), Err: err}
			return
		}
		w.ev = NodeEvent{Type: NodeEventType(ev.Type), Path: ev.Path, Err: publicErr(ev.Err)}
		if ev.Type == client.EventNotWatching {
			w.ev.Type = NodeWatchEnded
		}
	})
	return w.ev
}

// Remove ends the watch (its Event is NodeWatchEnded) and asks the server
// to drop it, unless another Watch shares it; ctx bounds that request.
func (w *Watch) Remove(ctx context.Context) error {
	if w.unmade() {
		return errUnmadeWatch
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	return publicErr(w.w.Remove(ctx))
}

// NodeEvent is what a Watch saw.
type NodeEvent struct {
	Type NodeEventType
	// Path is the watched node.
	Path string
	// Err is why a watch ended without a change (NodeWatchEnded):
	// ErrSessionExpired, ErrSessionClosed, ErrAuthFailed, or an error
	// wrapping the removal for Watch.Remove.
	Err error
}

// NodeEventType is what happened to a watched node.
type NodeEventType int32

// The node event types (ZooKeeper's Watcher.Event.EventType, with its
// values).
const (
	NodeCreated         NodeEventType = 1
	NodeDeleted         NodeEventType = 2
	NodeDataChanged     NodeEventType = 3
	NodeChildrenChanged NodeEventType = 4
	// NodeWatchEnded: the watch ended without a change of its node.
	NodeWatchEnded NodeEventType = -2
)

// String returns the type's name, as in logs.
func (t NodeEventType) String() string { return client.EventType(t).String() }
