package queuetest

import (
	"context"
	"maps"
	"slices"
	"sync"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/queue"
)

// Conn is one client session on a Server: a queue.Conn. Its session id
// and epochs are the test's to change.
type Conn struct {
	s        *Server
	sid      int64
	ep       *epoch // the live epoch; nil while none is
	closed   bool
	faults   []pending
	discards []Watch
	observe  func(context.Context, Op, string, *Fault) // Observe
	czxids   sync.Map                                  // dir → czxid: KnownCzxid
}

var _ queue.Conn = (*Conn)(nil)

// epoch is what Epoch.Key holds.
type epoch struct {
	sid   int64
	done  chan struct{}
	nodes map[string]struct{} // tracked: deleted when the epoch ends
	pub   queue.EpochInfo     // what Epoch hands out, shared by all
}

// newEpoch returns a live epoch of session sid.
func newEpoch(sid int64) *epoch {
	e := &epoch{sid: sid, done: make(chan struct{}), nodes: map[string]struct{}{}}
	e.pub = queue.EpochInfo{SessionID: sid, Done: e.done, Key: e}
	return e
}

// Connect opens a new session with a live epoch.
func (s *Server) Connect() *Conn {
	s.mu.Lock()
	defer s.mu.Unlock()
	c := &Conn{s: s}
	c.newSessionLocked()
	return c
}

func (c *Conn) newSessionLocked() {
	c.s.lastSID++
	c.sid = c.s.lastSID
	c.ep = newEpoch(c.sid)
	c.s.changedLocked()
}

// Server returns the tree c is connected to.
func (c *Conn) Server() *Server { return c.s }

// SessionID returns c's current session id.
func (c *Conn) SessionID() int64 {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.sid
}

// EndEpoch ends the live epoch, as the ownership deadline passing does:
// its Done channel closes and the nodes tracked with it are deleted (the
// session survives, and its cleanup removes them). No epoch is live until
// NewEpoch.
func (c *Conn) EndEpoch() {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.endEpochLocked(true)
}

func (c *Conn) endEpochLocked(cleanup bool) {
	ep := c.ep
	if ep == nil {
		return
	}
	c.ep = nil
	close(ep.done)
	// The session's state changed: its child waiters look again, as the
	// real Conn's do (a watch may not survive a reconnect).
	for p, ws := range c.s.childW {
		c.s.childW[p] = slices.DeleteFunc(ws, func(w childWatch) bool {
			if w.sid == ep.sid {
				w.ch <- client.Event{Type: client.EventNotWatching, Path: p, Watched: p, Kind: client.WatchChildren}
			}
			return w.sid == ep.sid
		})
	}
	if cleanup {
		for _, p := range slices.Sorted(maps.Keys(ep.nodes)) {
			c.s.deleteOwnedLocked(p, ep.sid)
		}
	}
	c.s.changedLocked()
}

// NewEpoch starts an epoch of the current session if none is live, as a
// reconnection does.
func (c *Conn) NewEpoch() {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.ep == nil && !c.closed {
		c.ep = newEpoch(c.sid)
		c.s.changedLocked()
	}
}

// NewSession ends the live epoch and gives c a new session with a live
// epoch, as a reconnection after expiry does, and returns the old session
// id. The old session's nodes stay until Server.ExpireSession(old): the
// client may learn of the expiry before the server has removed them.
func (c *Conn) NewSession() (old int64) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	old = c.sid
	c.endEpochLocked(false) // the old session's nodes are not ours to delete
	c.newSessionLocked()
	return old
}

// Expire is NewSession with the old session's nodes deleted at once.
func (c *Conn) Expire() {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	old := c.sid
	c.endEpochLocked(false)
	c.s.expireLocked(old)
	c.newSessionLocked()
}

// Close ends the session: its epoch ends, its nodes are deleted, and Epoch
// fails with client.ErrClosed from then on.
func (c *Conn) Close() {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.closed = true
	c.endEpochLocked(false)
	c.s.expireLocked(c.sid)
}

// Tracked returns the nodes tracked with the live epoch, sorted.
func (c *Conn) Tracked() []string {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if c.ep == nil {
		return nil
	}
	return slices.Sorted(maps.Keys(c.ep.nodes))
}

// Discards returns every Discard call, in order.
func (c *Conn) Discards() []Watch {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return slices.Clone(c.discards)
}

// Epoch waits for a live epoch.
func (c *Conn) Epoch(ctx context.Context) (queue.Epoch, error) {
	f, err := c.begin(ctx, OpEpoch, "")
	if err != nil {
		return queue.Epoch{}, err
	}
	if f.Err != nil {
		return queue.Epoch{}, f.Err
	}
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return queue.Epoch{}, err
	}
	if f.After != nil {
		f.After()
	}
	return queue.Epoch{EpochInfo: &ep.pub}, nil
}

func (c *Conn) awaitEpoch(ctx context.Context) (*epoch, error) {
	counted := false
	defer func() {
		if counted {
			c.block(OpEpoch, -1)
		}
	}()
	for {
		c.s.mu.Lock()
		ep, closed, ch := c.ep, c.closed, c.s.changed
		c.s.mu.Unlock()
		switch {
		case closed:
			return nil, client.ErrClosed
		case ep != nil:
			return ep, nil
		case !counted:
			counted = true
			c.block(OpEpoch, +1) // changes the state: look again
			continue
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// key returns ep's epoch; nil for the zero Epoch.
func key(ep queue.Epoch) *epoch {
	if ep.EpochInfo == nil {
		return nil
	}
	e, _ := ep.Key.(*epoch)
	return e
}

// Track arranges for p to be deleted when ep ends; false if ep has ended.
func (c *Conn) Track(ep queue.Epoch, t *queue.Tracked) bool {
	p := t.Path
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	e := key(ep)
	if e == nil || e != c.ep {
		return false
	}
	e.nodes[p] = struct{}{}
	c.s.changedLocked()
	return true
}

// Untrack undoes Track.
func (c *Conn) Untrack(ep queue.Epoch, t *queue.Tracked) {
	p := t.Path
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	if e := key(ep); e != nil {
		delete(e.nodes, p)
		c.s.changedLocked()
	}
}
