package session

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
)

// watch is one outstanding data watch on a node, shared by every waiter on
// that node. go-zookeeper cannot remove a watch, so a waiter that gives up
// leaves its watch behind until the node changes; sharing one watch per
// path keeps those from piling up when waiters come and go. The event is
// delivered by the session's event callback (onWatchEvent), so a watch
// costs no goroutine.
type watch struct {
	fired chan struct{} // closed once change is set
	// change is what happened: Deleted, Released (an announcing node's
	// data changed) or LookAgain (the watch ended without a proof, or
	// another node's data changed).
	change queue.Change
	// announces: the node's data, read when the watch was set, marks it
	// as announcing its release (queue.Announcer).
	announces bool
}

// fireLocked delivers ch to the waiters of w and forgets w. c.mu must be
// held.
func (c *Conn) fireLocked(path string, w *watch, ch queue.Change) {
	if c.watches[path] == w {
		delete(c.watches, path)
	}
	select {
	case <-w.fired:
	default:
		w.change = ch
		close(w.fired)
	}
}

// onWatchEvent is the event callback's part for node events: it fires the
// watch registered for the event's path. It runs on go-zookeeper's
// receiving goroutine and does not block.
func (c *Conn) onWatchEvent(ev zk.Event) {
	if ev.Type == zk.EventNodeChildrenChanged || ev.Type == zk.EventNodeDeleted || ev.Type == zk.EventNotWatching {
		c.mu.Lock()
		c.fireChildrenLocked(ev.Path, ev)
		c.mu.Unlock()
	}
	var ch queue.Change
	switch ev.Type {
	case zk.EventNodeDeleted:
		ch = queue.Deleted
	case zk.EventNodeDataChanged:
		ch = queue.Released
	case zk.EventNotWatching, zk.EventNodeCreated:
		ch = queue.LookAgain
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.watches[ev.Path]; w != nil {
		if ch == queue.Released && !w.announces {
			// A write to a node that does not announce releases (a
			// revocation request, a cohort's guard) proves nothing. (The
			// reply that set the watch reaches us first; should this run
			// before arm has recorded it, the change is only looked at.)
			ch = queue.LookAgain
		}
		c.fireLocked(ev.Path, w, ch)
	}
}

// waitChange blocks until the node at path is deleted or changed, ctx ends,
// stop is closed (then it returns errStopped), or the session's state
// changes (then it returns LookAgain: after a reconnect go-zookeeper
// restores watches from a goroutine and only logs a failure, issue #83, so
// no waiter may rely on one across a reconnect). It returns Deleted at once
// if the node does not exist. A data watch (getData) is used rather than
// exists, as Curator does, so that no watch is left on a node that is
// already gone; and a data watch is what sees an announced release.
func (c *Conn) waitChange(ctx context.Context, path string, stop <-chan struct{}) (queue.Change, error) {
	w, arm, changed := c.watchFor(path)
	if arm {
		if err := c.arm(ctx, path, stop, w); err != nil {
			return queue.LookAgain, err
		}
	}
	return c.await(ctx, w, changed, stop)
}

// waitData is waitChange for a caller that read path's data at version: it
// sets a data watch of its own even when the watch is shared (one getData
// request, which sets the watch and reads the version at once), so that a
// write between the caller's read and the shared watch being set on the
// server is seen, as a version other than the caller's (LookAgain at
// once), rather than missed.
func (c *Conn) waitData(ctx context.Context, path string, version int32, stop <-chan struct{}) (queue.Change, error) {
	w, _, changed := c.watchFor(path)
	st, err := c.armStat(ctx, path, stop, w)
	if err != nil || st == nil {
		return queue.Deleted, err // st is nil only when the node is gone
	}
	if st.Version != version {
		return queue.LookAgain, nil
	}
	return c.await(ctx, w, changed, stop)
}

// watchFor returns the watch on path, registering a new one (arm: the
// caller sets it on the server) if there is none, and the channel the next
// state transition closes. The watch is registered before its request is
// sent, since the event may arrive as soon as the reply does.
func (c *Conn) watchFor(path string) (w *watch, arm bool, changed <-chan struct{}) {
	c.mu.Lock()
	defer c.mu.Unlock()
	w = c.watches[path]
	if w == nil {
		w, arm = &watch{fired: make(chan struct{})}, true
		c.watches[path] = w
	}
	return w, arm, c.changed
}

// await waits for w to fire, a state transition after changed was taken,
// ctx, stop or Close.
func (c *Conn) await(ctx context.Context, w *watch, changed, stop <-chan struct{}) (queue.Change, error) {
	select {
	case <-w.fired:
		return w.change, nil
	case <-changed:
		return queue.LookAgain, nil
	case <-ctx.Done():
		return queue.LookAgain, ctx.Err()
	case <-stop:
		return queue.LookAgain, errStopped
	case <-c.done:
		return queue.LookAgain, ErrClosed
	}
}

// readWatch reads path's data and sets a data watch for a caller of its
// own (as waitData does), returning the data and the wait on that watch;
// ok is false if the node does not exist.
func (c *Conn) readWatch(ctx context.Context, path string, stop <-chan struct{}) ([]byte, bool, func(context.Context) (queue.Change, error), error) {
	w, _, changed := c.watchFor(path)
	data, st, err := c.armRead(ctx, path, stop, w)
	if err != nil || st == nil {
		return nil, false, nil, err
	}
	return data, true, func(ctx context.Context) (queue.Change, error) { return c.await(ctx, w, changed, stop) }, nil
}

// arm sets the server's data watch for w. On failure w is fired, so that
// waiters who share it look again; a node that does not exist fires it
// with Deleted.
func (c *Conn) arm(ctx context.Context, path string, stop <-chan struct{}, w *watch) error {
	_, _, err := c.armRead(ctx, path, stop, w)
	return err
}

// armStat is arm that also returns the node's stat when the watch was set,
// or nil, with no error, when the node does not exist.
func (c *Conn) armStat(ctx context.Context, path string, stop <-chan struct{}, w *watch) (*zk.Stat, error) {
	_, st, err := c.armRead(ctx, path, stop, w)
	return st, err
}

// armRead is armStat that also returns the node's data.
func (c *Conn) armRead(ctx context.Context, path string, stop <-chan struct{}, w *watch) ([]byte, *zk.Stat, error) {
	type read struct {
		data []byte
		st   *zk.Stat
	}
	r, err := retryUntil(ctx, c, stop, func() (read, error) {
		// The channel go-zookeeper returns is buffered and closed when the
		// watch fires; onWatchEvent sees the same event, so nobody reads it.
		data, st, _, err := c.zk.GetW(path)
		return read{data, st}, err
	})
	if err == nil {
		c.mu.Lock()
		w.announces = queue.Announces(r.data)
		c.mu.Unlock()
		return r.data, r.st, nil
	}
	ch := queue.LookAgain
	if errors.Is(err, zk.ErrNoNode) {
		ch, err = queue.Deleted, nil
	}
	c.mu.Lock()
	c.fireLocked(path, w, ch)
	c.mu.Unlock()
	if err != nil {
		return nil, nil, wrapOp("watch", path, err)
	}
	return nil, nil, nil
}
