package session

import (
	"context"
	"errors"
	"path"
	"slices"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// ErrNoPersistent is returned by TrackDir when the server refuses persistent
// watches (ZooKeeper before 3.6): the caller uses one-shot watches instead.
// The Conn remembers the refusal and does not ask again.
var ErrNoPersistent = errors.New("zklock: the server has no persistent watches")

// tree is the session's one persistent recursive watch (addWatch,
// PERSISTENT_RECURSIVE) on a directory, shared by every TrackDir of it. It is
// set by the first TrackDir and stays while the directory is tracked: no
// request sets or removes a watch per node, and the server holds one watch
// per session and directory. Its price is that the session hears of every
// creation, data change and deletion in the directory; so a tree nobody
// has tracked for treeLinger is removed (removeWatches, one request), and
// the next TrackDir sets it again.
//
// After a reconnect of the same session the client sets it again
// (setWatches2) before any later request, but the server does not replay
// what changed meanwhile: every tracking is told to look again at the
// state change. If the server does not set it again, or the session
// expires, the watch ends (EventNotWatching): its trackings are told to
// look again and the next TrackDir sets a new one.
type tree struct {
	dir   string
	sid   int64         // the session that set it
	ready chan struct{} // closed once set (w) or failed (err)
	w     *client.Watch // the client's watch, drained by a goroutine
	err   error         // why it could not be set
	subs  []*Tracking   // its trackings
	ended bool          // the watch ended: later trackings are lost at once
	idle  *idleTimer    // armed while nobody tracks: removes the tree
	gone  chan struct{} // not nil once the tree is being removed; closed when it is
}

// treeLinger is how long a tree nobody tracks stays on the server: long
// enough that a client taking lease after lease keeps it (its one
// request to set it again would cost more than the events it hears), short
// enough that a session done with a semaphore soon stops hearing of it.
const treeLinger = 10 * time.Second

// idleTimer is a tree's pending removal; its identity tells a timer that
// fired from one armed again since.
type idleTimer struct{ t *time.Timer }

// Tracking is one caller's subscription to the deletions under a tree's
// directory (see TrackDir).
type Tracking struct {
	c       *Conn
	t       *tree
	ep      *epoch
	changed <-chan struct{} // the state transition that voids the tracking
	note    chan struct{}   // a deletion is queued (capacity 1)

	// Guarded by c.mu.
	gone []string // names of the children deleted since Next last returned
	lost bool     // the tree's watch ended
}

// TrackDir subscribes to the deletions of dir's children through the
// session's persistent recursive watch on dir, set by the first TrackDir of
// dir in the session (one addWatch request) and shared by all later ones:
// a TrackDir costs no request once the watch is set. A caller that lists dir
// after TrackDir returned hears of every deletion after its listing: the
// server sends an event before its reply to any later request, so a
// listing's reply follows the events of the deletions it reflects and
// precedes those of later ones. sid is the session tracked under. It
// fails with ErrNoPersistent if the server refuses persistent watches.
//
// next is Tracking.Next, stop Tracking.Stop.
func (c *Conn) TrackDir(ctx context.Context, dir string) (next func(context.Context) ([]string, bool, error), stop func(), sid int64, err error) {
	tk, sid, err := c.trackDir(ctx, dir)
	if err != nil {
		return nil, nil, 0, err
	}
	return tk.Next, tk.Stop, sid, nil
}

func (c *Conn) trackDir(ctx context.Context, dir string) (tk *Tracking, sid int64, err error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return nil, 0, err
	}
	t, err := c.treeFor(ctx, dir, ep)
	if errors.Is(err, errStopped) {
		return &Tracking{c: c, ep: ep, lost: true, note: make(chan struct{}, 1)}, ep.sid, nil
	} else if err != nil {
		return nil, 0, err
	}
	return c.subscribe(t, ep), ep.sid, nil
}

// treeFor returns dir's tree for ep's session, setting the watch if there
// is none (the callers that come meanwhile wait for it).
func (c *Conn) treeFor(ctx context.Context, dir string, ep *epoch) (*tree, error) {
	// Whether the servers keep watch modes apart is known once the survey
	// is in (it runs from Dial, and takes a few round trips): the answer
	// then holds for the session, so that its trackings all go one way.
	select {
	case <-c.surveyed:
	case <-ctx.Done():
		return nil, ctx.Err()
	case <-ep.done:
		return nil, errStopped
	}
	if !c.assumeModes.Load() && !c.sv.Load().watchModes {
		return nil, ErrNoPersistent
	}
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
			t, arm = &tree{dir: dir, sid: ep.sid, ready: make(chan struct{})}, true
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

// subscribe registers a tracking on t. A tree that ended, or is being
// removed, since treeFor returned it gives a tracking that is lost at
// once: its caller looks again.
func (c *Conn) subscribe(t *tree, ep *epoch) *Tracking {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.idle != nil {
		t.idle.t.Stop()
		t.idle = nil
	}
	tk := &Tracking{c: c, t: t, ep: ep, changed: c.changed, note: make(chan struct{}, 1), lost: t.ended || t.gone != nil}
	t.subs = append(t.subs, tk)
	return tk
}

// idleLocked arms t's removal once nobody tracks under it. c.mu must
// be held.
func (c *Conn) idleLocked(t *tree) {
	if len(t.subs) > 0 || t.ended || t.gone != nil || t.idle != nil || c.trees[t.dir] != t {
		return
	}
	it := &idleTimer{}
	it.t = time.AfterFunc(c.linger, func() { c.evict(t, it) })
	t.idle = it
}

// evict removes t, unless it was tracked again since it was armed.
// Until the removal is done, a TrackDir of its directory waits (a watch set
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
// onTree routes an event of a tree's watch: a deletion of a child of its
// directory goes to every tracking; the end of the watch loses them all.
// c.mu must be held.
func (c *Conn) onTree(ev client.Event) {
	t := c.trees[ev.Watched]
	if t == nil {
		return
	}
	switch {
	case ev.Type == client.EventNotWatching:
		t.ended = true
		delete(c.trees, ev.Watched)
		for _, tk := range t.subs {
			tk.lost = true
			tk.signal()
		}
	case ev.Type == client.EventNodeDeleted && path.Dir(ev.Path) == t.dir:
		name := ev.Path[len(t.dir)+1:]
		for _, tk := range t.subs {
			tk.gone = append(tk.gone, name)
			tk.signal()
		}
	}
}

func (tk *Tracking) signal() {
	select {
	case tk.note <- struct{}{}:
	default:
	}
}

// Next waits for deletions under the directory and returns the names of
// the children deleted since it last returned; look is true instead when
// some may have been missed: the session's state changed (events during a
// disconnection are lost), the watch ended, or the epoch ended. After look
// the caller stops this tracking, tracks again, and lists again.
func (tk *Tracking) Next(ctx context.Context) (gone []string, look bool, err error) {
	c := tk.c
	for {
		c.mu.Lock()
		gone, lost := tk.gone, tk.lost
		tk.gone = nil
		c.mu.Unlock()
		switch {
		case lost:
			return nil, true, nil
		case len(gone) > 0:
			return gone, false, nil
		}
		select {
		case <-tk.note:
		case <-tk.changed:
			return nil, true, nil
		case <-tk.ep.done:
			return nil, true, nil
		case <-ctx.Done():
			return nil, false, ctx.Err()
		case <-c.done:
			return nil, false, ErrClosed
		}
	}
}

// Stop ends the tracking. The tree's watch stays for the session's other
// and later trackings, and goes once none has tracked for the linger.
func (tk *Tracking) Stop() {
	if tk.t == nil {
		return
	}
	c := tk.c
	c.mu.Lock()
	defer c.mu.Unlock()
	tk.t.subs = slices.DeleteFunc(tk.t.subs, func(x *Tracking) bool { return x == tk })
	tk.gone = nil
	c.idleLocked(tk.t)
}

// AssumeWatchModes makes TrackDir work on servers the survey did not find
// at ZooKeeper 3.9 or later, as if they kept a session's watches of
// different modes on one path apart. On 3.8 that holds only while the
// session sets no other watch on a tracked directory itself (no WatchLock,
// no ChildrenW there): the tests of tracking on this repository's 3.8
// servers use it under that condition.
func (c *Conn) AssumeWatchModes() { c.assumeModes.Store(true) }
