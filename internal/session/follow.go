package session

import (
	"context"
	"errors"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// ErrNoPersistent is returned by Follow when the server refuses persistent
// watches (ZooKeeper before 3.6): the caller uses one-shot watches instead.
// The Conn remembers the refusal and does not ask again.
var ErrNoPersistent = errors.New("zklock: the server has no persistent watches")

// tree is the session's one persistent recursive watch (addWatch,
// PERSISTENT_RECURSIVE) on a directory, shared by every Follow of a node
// in it. It is set by the first Follow in the directory and stays while
// nodes there are followed: no request sets or removes a watch per node,
// and the server holds one watch per session and directory, however many
// nodes are followed there. Its price is that the session hears of every
// creation, data change and deletion in the directory, followed or not;
// so a tree nobody has followed for treeLinger is removed (removeWatches,
// one request), and the next Follow there sets it again.
//
// After a reconnect of the same session the client sets it again
// (setWatches2) before any later request, but the server does not replay
// what changed meanwhile: every follower is told LookAgain at the state
// change and reads again. If the server does not set it again, or the
// session expires, the watch ends (EventNotWatching): its followers are
// told LookAgain and the next Follow sets a new one.
type tree struct {
	dir   string
	sid   int64                   // the session that set it
	ready chan struct{}           // closed once set (w) or failed (err)
	w     *client.Watch           // the client's watch, drained by a goroutine
	err   error                   // why it could not be set
	subs  map[string][]*Following // followers by node path
	ended bool                    // the watch ended: later follows are lost at once
	idle  *idleTimer              // armed while nobody follows: removes the tree
	gone  chan struct{}           // not nil once the tree is being removed; closed when it is
}

// treeLinger is how long a tree nobody follows stays on the server: long
// enough that a client taking lease after lease keeps it (its one
// request to set it again would cost more than the events it hears), short
// enough that a session done with a semaphore soon stops hearing of it.
const treeLinger = 10 * time.Second

// idleTimer is a tree's pending removal; its identity tells a timer that
// fired from one armed again since.
type idleTimer struct{ t *time.Timer }

// Following is one caller's follow of a node (see Follow): the changes
// the tree's watch saw of it since Next last returned.
type Following struct {
	c       *Conn
	t       *tree
	path    string
	ep      *epoch
	changed <-chan struct{} // the state transition that voids the follow
	note    chan struct{}   // a change is flagged (capacity 1)

	// Guarded by c.mu.
	announces bool // the data read marks the node's writes as proofs
	deleted   bool
	written   bool // the data changed since Next last said so
	lost      bool // the tree's watch ended
}

// Follow reads path's data, a node in dir, and follows its changes through
// the session's persistent recursive watch on dir, set by the first Follow
// in dir of the session (one addWatch request) and shared by all later
// ones: a Follow costs one getData request, and follows the node until it
// is deleted or Stop, with no request to set the watch again after each
// change nor to remove it. ok is false, with no follow, if the node does
// not exist. next reports the changes (Following.Next), stop ends the
// follow (Following.Stop). It fails with ErrNoPersistent if the server
// refuses persistent watches.
func (c *Conn) Follow(ctx context.Context, dir, path string) (data []byte, ok bool, next func(context.Context) (Change, error), stop func(), err error) {
	f, data, ok, err := c.follow(ctx, dir, path)
	if err != nil || !ok {
		return nil, ok, nil, nil, err
	}
	return data, true, f.Next, f.Stop, nil
}

func (c *Conn) follow(ctx context.Context, dir, path string) (f *Following, data []byte, ok bool, err error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return nil, nil, false, err
	}
	t, err := c.treeFor(ctx, dir, ep)
	if errors.Is(err, errStopped) {
		return c.lostFollow(ep), nil, true, nil
	} else if err != nil {
		return nil, nil, false, err
	}
	f = c.subscribe(t, path, ep)
	// The watch was set before this read is sent, and the server answers
	// a session's requests in order: no change after the read is missed.
	r, err := retryUntil(ctx, c, ep, func(ctx context.Context) (read, error) {
		data, st, err := c.cl.Get(ctx, path)
		return read{data: data, stat: st}, err
	})
	switch {
	case errors.Is(err, errStopped):
		f.Stop()
		return c.lostFollow(ep), nil, true, nil
	case errors.Is(err, client.ErrNoNode):
		f.Stop()
		return nil, nil, false, nil
	case err != nil:
		f.Stop()
		return nil, nil, false, wrapOp("get", path, err)
	}
	c.mu.Lock()
	f.announces = c.cfg.Announces != nil && c.cfg.Announces(r.data)
	c.mu.Unlock()
	return f, r.data, true, nil
}

// lostFollow is a follow whose epoch ended before it began: Next says
// LookAgain.
func (c *Conn) lostFollow(ep *epoch) *Following {
	return &Following{c: c, ep: ep, lost: true, note: make(chan struct{}, 1)}
}

// treeFor returns dir's tree for ep's session, setting the watch if there
// is none (the callers that come meanwhile wait for it).
func (c *Conn) treeFor(ctx context.Context, dir string, ep *epoch) (*tree, error) {
	for {
		c.mu.Lock()
		if c.noPersistent {
			c.mu.Unlock()
			return nil, ErrNoPersistent
		}
		t, arm := c.trees[dir], false
		if t != nil && t.gone != nil { // being removed: set it again after
			gone := t.gone
			c.mu.Unlock()
			select {
			case <-gone:
				continue
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		if t == nil || t.sid != ep.sid {
			t, arm = &tree{dir: dir, sid: ep.sid, ready: make(chan struct{}), subs: make(map[string][]*Following)}, true
			c.trees[dir] = t
		}
		c.mu.Unlock()
		if arm {
			c.armTree(ctx, dir, ep, t)
		}
		select {
		case <-t.ready:
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-ep.done:
			return nil, errStopped
		}
		switch {
		case t.err == nil:
			return t, nil
		case errors.Is(t.err, ErrNoPersistent), errors.Is(t.err, errStopped), errors.Is(t.err, ErrClosed), ctx.Err() != nil:
			return nil, t.err
		}
		// The setter's ctx ended, or its request failed: set it again.
	}
}

// armTree sets t's watch on the server, then starts the goroutine that drains
// the client's queue of its events (the Conn routes them from the OnWatch
// hook: see onTree).
func (c *Conn) armTree(ctx context.Context, dir string, ep *epoch, t *tree) {
	w, err := retryUntil(ctx, c, ep, func(ctx context.Context) (*client.Watch, error) {
		return c.cl.AddWatch(ctx, dir, true)
	})
	c.mu.Lock()
	switch {
	case errors.Is(err, client.ErrUnimplemented):
		c.noPersistent, err = true, ErrNoPersistent
	case err == nil:
		t.w = w
	}
	if t.err = err; err != nil && c.trees[dir] == t {
		delete(c.trees, dir)
	}
	close(t.ready)
	c.mu.Unlock()
	if err == nil {
		c.Go(func(bg context.Context) {
			for {
				if _, err := w.Next(bg); err != nil {
					return // ended (removed, expired, closed), or Close began
				}
			}
		})
	}
}

// subscribe registers a follow of path on t, before its read is sent. A
// tree that ended, or is being removed, since treeFor returned it gives a
// follow that is lost at once: its caller looks again.
func (c *Conn) subscribe(t *tree, path string, ep *epoch) *Following {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.idle != nil {
		t.idle.t.Stop()
		t.idle = nil
	}
	f := &Following{c: c, t: t, path: path, ep: ep, changed: c.changed, note: make(chan struct{}, 1), lost: t.ended || t.gone != nil}
	t.subs[path] = append(t.subs[path], f)
	return f
}

// idleLocked arms t's removal once nobody follows a node in it. c.mu must
// be held.
func (c *Conn) idleLocked(t *tree) {
	if len(t.subs) > 0 || t.ended || t.gone != nil || t.idle != nil || c.trees[t.dir] != t {
		return
	}
	it := &idleTimer{}
	it.t = time.AfterFunc(c.linger, func() { c.evict(t, it) })
	t.idle = it
}

// evict removes t, unless it was followed again since it was armed.
// Until the removal is done, a Follow in its directory waits (a watch set
// again before the server removes the old one would be removed with it).
func (c *Conn) evict(t *tree, it *idleTimer) {
	c.mu.Lock()
	if t.idle != it || len(t.subs) > 0 || t.ended || c.trees[t.dir] != t {
		c.mu.Unlock()
		return
	}
	t.idle, t.gone = nil, make(chan struct{})
	c.mu.Unlock()
	done := func() {
		c.mu.Lock()
		if c.trees[t.dir] == t {
			delete(c.trees, t.dir)
		}
		close(t.gone)
		c.mu.Unlock()
	}
	if !c.spawn(func() {
		defer done()
		ctx, cancel := context.WithTimeout(c.bg, c.Timeout())
		defer cancel()
		// A failure leaves the server's watch until the session ends or
		// the connection is lost (the client will not restore it): its
		// events find no tree.
		_ = t.w.Remove(ctx)
	}) {
		done() // Close began: the session's end takes the watch
	}
}

// onTree routes an event of a tree's watch to the followers of its node;
// the end of the watch loses every follower. c.mu must be held.
func (c *Conn) onTree(ev client.Event) {
	t := c.trees[ev.Watched]
	if t == nil {
		return
	}
	if ev.Type == client.EventNotWatching {
		t.ended = true
		delete(c.trees, ev.Watched)
		for _, fs := range t.subs {
			for _, f := range fs {
				f.lost = true
				f.signal()
			}
		}
		return
	}
	for _, f := range t.subs[ev.Path] {
		switch ev.Type {
		case client.EventNodeDeleted:
			f.deleted = true
		case client.EventNodeDataChanged:
			f.written = true
		default:
			continue
		}
		f.signal()
	}
}

func (f *Following) signal() {
	select {
	case f.note <- struct{}{}:
	default:
	}
}

// Next waits for the next change of the node: Deleted (and every later
// call says so too), Released (its data changed since the last Next, and
// the data read marked it as announcing: see Config.Announces), or
// LookAgain: another change, the session's state changed (events missed
// during a disconnection are lost), the watch ended, or the epoch ended.
// After LookAgain the caller stops this follow and reads again.
func (f *Following) Next(ctx context.Context) (Change, error) {
	c := f.c
	for {
		c.mu.Lock()
		deleted, written, lost, announces := f.deleted, f.written, f.lost, f.announces
		f.written = false
		c.mu.Unlock()
		switch {
		case deleted:
			return Deleted, nil
		case lost:
			return LookAgain, nil
		case written && announces:
			return Released, nil
		case written:
			return LookAgain, nil
		}
		select {
		case <-f.note:
		case <-f.changed:
			return LookAgain, nil
		case <-f.ep.done:
			return LookAgain, nil
		case <-ctx.Done():
			return LookAgain, ctx.Err()
		case <-c.done:
			return LookAgain, ErrClosed
		}
	}
}

// Stop ends the follow. The tree's watch stays for the session's other
// and later follows.
func (f *Following) Stop() {
	if f.t == nil {
		return
	}
	c := f.c
	c.mu.Lock()
	defer c.mu.Unlock()
	fs := f.t.subs[f.path]
	for i, x := range fs {
		if x == f {
			fs = append(fs[:i:i], fs[i+1:]...)
			break
		}
	}
	if len(fs) == 0 {
		delete(f.t.subs, f.path)
		c.idleLocked(f.t)
	} else {
		f.t.subs[f.path] = fs
	}
}
