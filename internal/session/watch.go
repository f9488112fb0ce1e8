package session

import (
	"context"
	"errors"

	"github.com/zklock/zklock/internal/client"
)

// Change is what WaitChange saw happen to the node it watched.
type Change int

const (
	// LookAgain: nothing is known of the node; list the queue again.
	LookAgain Change = iota
	// Deleted: the node is gone, however it went: released, abandoned by
	// a waiter, or with its session.
	Deleted
	// Released: the data of an announcing node (the Announces hook of Config) changed.
	// Only an announced release (ReleaseUntil) changes it, unless
	// another client writes it (Curator's Revoker can), and that release
	// deleted the node in the same transaction. A data change on any other
	// node is LookAgain.
	Released
)

// watch is one outstanding data watch on a node, shared by every waiter on
// that node. A waiter that gives up leaves its watch behind until the node
// changes; sharing one watch per path keeps those from piling up when
// waiters come and go. The event is delivered by the client's OnWatch hook
// (onWatch), so a watch costs no goroutine.
type watch struct {
	fired chan struct{} // closed once change is set
	// change is what happened: Deleted, Released (an announcing node's
	// data changed) or LookAgain (the watch ended without a proof, or
	// another node's data changed).
	change Change
	// announces: the node's data, read when the watch was set, marks it
	// as announcing its release (Config.Announces).
	announces bool
}

// fireLocked delivers ch to the waiters of w and forgets w. c.mu must be
// held.
func (c *Conn) fireLocked(path string, w *watch, ch Change) {
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

// onWatch is the client's OnWatch hook: a child watch's event wakes the
// ChildrenW waiters of its path; a data watch's fires the watch registered
// for its path; a recursive watch's goes to the followers of its node
// (onTree). It runs on the client's reading goroutine and does not
// block. (An exist watch, WaitExists's, is waited on by its caller.)
func (c *Conn) onWatch(ev client.Event) {
	switch ev.Kind {
	case client.WatchChildren:
		c.mu.Lock()
		c.fireChildrenLocked(ev.Watched, ev)
		c.mu.Unlock()
		return
	case client.WatchPersistentRecursive:
		c.mu.Lock()
		c.onTree(ev)
		c.mu.Unlock()
		return
	case client.WatchData:
	default:
		return
	}
	var ch Change
	switch ev.Type {
	case client.EventNodeDeleted:
		ch = Deleted
	case client.EventNodeDataChanged:
		ch = Released
	case client.EventNotWatching, client.EventNodeCreated:
		ch = LookAgain
	default:
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.watches[ev.Watched]; w != nil {
		if ch == Released && !w.announces {
			// A write to a node that does not announce releases (a
			// revocation request, a cohort's guard) proves nothing. (The
			// reply that set the watch reaches us first; should this run
			// before arm has recorded it, the change is only looked at.)
			ch = LookAgain
		}
		c.fireLocked(ev.Watched, w, ch)
	}
}

// waitChange blocks until the node at path is deleted or changed, ctx ends,
// ep ends (then it returns errStopped), or the session's state changes
// (then it returns LookAgain: a watch restored after a reconnect is not
// trusted alone, so no waiter relies on one across a reconnect). It returns Deleted at once
// if the node does not exist. A data watch (getData) is used rather than
// exists, as Curator does, so that no watch is left on a node that is
// already gone; and a data watch is what sees an announced release.
func (c *Conn) waitChange(ctx context.Context, path string, ep *epoch) (Change, error) {
	w, arm, changed := c.watchFor(path)
	if arm {
		if err := c.arm(ctx, path, ep, w); err != nil {
			return LookAgain, err
		}
	}
	return c.await(ctx, w, changed, ep.done)
}

// waitData is waitChange for a caller that read path's data at version: it
// sets a data watch of its own even when the watch is shared (one getData
// request, which sets the watch and reads the version at once), so that a
// write between the caller's read and the shared watch being set on the
// server is seen, as a version other than the caller's (LookAgain at
// once), rather than missed.
func (c *Conn) waitData(ctx context.Context, path string, version int32, ep *epoch) (Change, error) {
	w, _, changed := c.watchFor(path)
	st, err := c.armStat(ctx, path, ep, w)
	if err != nil || st == nil {
		return Deleted, err // st is nil only when the node is gone
	}
	if st.Version != version {
		return LookAgain, nil
	}
	return c.await(ctx, w, changed, ep.done)
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
func (c *Conn) await(ctx context.Context, w *watch, changed, stop <-chan struct{}) (Change, error) {
	select {
	case <-w.fired:
		return w.change, nil
	case <-changed:
		return LookAgain, nil
	case <-ctx.Done():
		return LookAgain, ctx.Err()
	case <-stop:
		return LookAgain, errStopped
	case <-c.done:
		return LookAgain, ErrClosed
	}
}

// readWatch reads path's data and sets a data watch for a caller of its
// own (as waitData does), returning the data and the wait on that watch;
// ok is false if the node does not exist.
func (c *Conn) readWatch(ctx context.Context, path string, ep *epoch) ([]byte, bool, func(context.Context) (Change, error), error) {
	w, _, changed := c.watchFor(path)
	data, st, err := c.armRead(ctx, path, ep, w)
	if err != nil || st == nil {
		return nil, false, nil, err
	}
	return data, true, func(ctx context.Context) (Change, error) { return c.await(ctx, w, changed, ep.done) }, nil
}

// arm sets the server's data watch for w. On failure w is fired, so that
// waiters who share it look again; a node that does not exist fires it
// with Deleted.
func (c *Conn) arm(ctx context.Context, path string, ep *epoch, w *watch) error {
	_, _, err := c.armRead(ctx, path, ep, w)
	return err
}

// armStat is arm that also returns the node's stat when the watch was set,
// or nil, with no error, when the node does not exist.
func (c *Conn) armStat(ctx context.Context, path string, ep *epoch, w *watch) (*client.Stat, error) {
	_, st, err := c.armRead(ctx, path, ep, w)
	return st, err
}

// armRead is armStat that also returns the node's data.
func (c *Conn) armRead(ctx context.Context, path string, ep *epoch, w *watch) ([]byte, *client.Stat, error) {
	r, err := retryUntil(ctx, c, ep, func(ctx context.Context) (read, error) {
		// The Watch the client returns gets the same event as onWatch,
		// which delivers it: nobody reads it.
		data, st, _, err := c.cl.GetW(ctx, path)
		return read{data: data, stat: st}, err
	})
	if err == nil {
		c.mu.Lock()
		w.announces = c.cfg.Announces != nil && c.cfg.Announces(r.data)
		c.mu.Unlock()
		return r.data, &r.stat, nil
	}
	ch := LookAgain
	if errors.Is(err, client.ErrNoNode) {
		ch, err = Deleted, nil
	}
	c.mu.Lock()
	c.fireLocked(path, w, ch)
	c.mu.Unlock()
	if err != nil {
		return nil, nil, wrapOp("watch", path, err)
	}
	return nil, nil, nil
}
