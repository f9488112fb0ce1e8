package chaos

import (
	"context"
	"errors"
	"path"
	"slices"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// watchConn is one of the node watcher's sessions, pinned to one server.
type watchConn struct {
	w     *nodeWatcher
	conn  *client.Client
	mu    sync.Mutex
	known map[string]map[string]bool // by directory: the names this session listed and has not seen go
	dirty map[string]bool            // directories to list again
	watch map[string]bool            // nodes whose data watch fired without a deletion: watch again
	all   bool                       // a session was made or restored: list everything, watch every known node
	wake  chan struct{}
}

// event is the client's OnWatch hook, run as each event is read, before
// any other work: the moment a deletion is stamped. The client tells it
// once per watch an event fires (a deletion fires a node's data watch and
// its directory's child watch): each case is idempotent.
func (c *watchConn) event(ev client.Event) {
	now := Now()
	c.mu.Lock()
	switch {
	case ev.Type == client.EventNodeDeleted && c.w.dirOf(ev.Path) != "":
		c.w.gone(ev.Path, now)
		delete(c.known[path.Dir(ev.Path)], path.Base(ev.Path))
	case ev.Type == client.EventNodeDeleted && slices.Contains(c.w.dirs, ev.Path):
		for name := range c.known[ev.Path] { // a directory goes only once empty
			c.w.gone(ev.Path+"/"+name, now)
		}
		c.known[ev.Path] = nil
		c.mark(ev.Path)
	case ev.Type == client.EventNodeDataChanged && c.w.dirOf(ev.Path) != "":
		c.watchAgain(ev.Path)
	case ev.Type == client.EventNodeChildrenChanged || ev.Type == client.EventNodeCreated:
		c.mark(ev.Path)
	case ev.Type == client.EventNotWatching:
		c.all = true
	}
	c.mu.Unlock()
	c.poke()
}

// state is the client's OnState hook: a session made or restored lists
// everything again.
func (c *watchConn) state(st client.State, _ client.StateInfo) {
	if st != client.StateConnected {
		return
	}
	c.mu.Lock()
	c.all = true
	c.mu.Unlock()
	c.poke()
}

func (c *watchConn) poke() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// mark and watchAgain note work for run, with c.mu held.
func (c *watchConn) mark(dir string) {
	if c.dirty == nil {
		c.dirty = map[string]bool{}
	}
	c.dirty[dir] = true
}

func (c *watchConn) watchAgain(p string) {
	if c.watch == nil {
		c.watch = map[string]bool{}
	}
	c.watch[p] = true
}

// run lists and watches what the events asked for, retrying failures
// (a server down, a session being restored) every 200ms, and lists every
// directory every 2s in case a watch was lost.
func (c *watchConn) run(ctx context.Context) {
	resync := time.Now()
	for i := 0; i < 100_000_000 && ctx.Err() == nil; i++ {
		due := time.Since(resync) > 2*time.Second
		if due {
			resync = time.Now()
		}
		dirty, watch := c.take(due)
		failed := false
		for d := range dirty {
			if err := c.list(ctx, d); err != nil {
				failed = true
				c.mu.Lock()
				c.mark(d)
				c.mu.Unlock()
			}
		}
		for p := range watch {
			if err := c.watchNode(ctx, p); err != nil {
				failed = true
				c.mu.Lock()
				c.watchAgain(p)
				c.mu.Unlock()
			}
		}
		wait := time.Second
		if failed {
			wait = 200 * time.Millisecond
		}
		t := time.NewTimer(wait)
		select {
		case <-c.wake:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
	}
}

// take returns the work noted since the last call, with every directory
// added when resync is due or a session was made or restored, and every
// known node too in the latter case.
func (c *watchConn) take(resync bool) (dirty, watch map[string]bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.all || resync {
		for _, d := range c.w.dirs {
			c.mark(d)
		}
	}
	if c.all {
		for d, names := range c.known {
			for name := range names {
				c.watchAgain(d + "/" + name)
			}
		}
		c.all = false
	}
	dirty, watch = c.dirty, c.watch
	c.dirty, c.watch = nil, nil
	return dirty, watch
}

// list lists dir with a child watch: a name it no longer shows was deleted
// by the time the listing came back; a new one is recorded and watched.
// A directory that does not exist (not created yet, or reaped once empty:
// the lock paths are containers) is watched until it does.
func (c *watchConn) list(ctx context.Context, dir string) error {
	names, _, _, err := c.conn.ChildrenW(ctx, dir)
	t := Now()
	if errors.Is(err, client.ErrNoNode) {
		return c.dirGone(ctx, dir, t)
	}
	if err != nil {
		return err
	}
	var added []string
	c.mu.Lock()
	if c.known[dir] == nil {
		c.known[dir] = map[string]bool{}
	}
	for name := range c.known[dir] {
		if !slices.Contains(names, name) {
			c.w.gone(dir+"/"+name, t)
			delete(c.known[dir], name)
		}
	}
	for _, name := range names {
		if !c.known[dir][name] {
			c.known[dir][name] = true
			c.w.seen(dir+"/"+name, t)
			added = append(added, dir+"/"+name)
		}
	}
	c.mu.Unlock()
	for _, p := range added {
		if err := c.watchNode(ctx, p); err != nil {
			c.mu.Lock()
			c.watchAgain(p)
			c.mu.Unlock()
		}
	}
	return nil
}

// dirGone records that dir, found missing at t, had lost every node this
// session knew in it (a directory goes only once empty), and watches for
// it to be made again.
func (c *watchConn) dirGone(ctx context.Context, dir string, t int64) error {
	c.mu.Lock()
	for name := range c.known[dir] {
		c.w.gone(dir+"/"+name, t)
	}
	c.known[dir] = nil
	c.mu.Unlock()
	_, ok, _, err := c.conn.ExistsW(ctx, dir)
	if err == nil && ok {
		err = errors.New("created meanwhile") // list it again
	}
	return err
}

// watchNode sets a data watch on p, which this session listed: if p is
// gone already, it was deleted by the time the read came back.
func (c *watchConn) watchNode(ctx context.Context, p string) error {
	data, _, _, err := c.conn.GetW(ctx, p)
	if errors.Is(err, client.ErrNoNode) {
		t := Now()
		c.mu.Lock()
		c.w.gone(p, t)
		delete(c.known[path.Dir(p)], path.Base(p))
		c.mu.Unlock()
		return nil
	}
	if err == nil {
		c.w.owner(p, data)
	}
	return err
}
