// Package queuetest is an in-memory ZooKeeper good enough for the queue
// algorithm of internal/queue, with the fault hooks a test needs to drive
// that algorithm through connection loss, expiry and reaped parents
// deterministically.
//
// A Server is the tree; a Conn is one session on it (a queue.Conn). The
// model is deliberately small: every request is answered at once and in
// order, ephemeral sequential nodes are numbered from their parent's
// cversion as ZooKeeper does, every write takes the next zxid, and watches
// are one-shot. What the real session adds (reconnection, retries of
// transient errors, background deletes) is reduced to its contract: a
// Conn's epochs are ended and started by the test, reads and deletes never
// fail unless a Fault says so, and Discard deletes at once.
//
// A Server is safe for concurrent use.
package queuetest

import (
	"context"
	"fmt"
	"maps"
	"path"
	"slices"
	"sync"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/queue"
)

// Server is an in-memory ZooKeeper tree shared by the Conns made from it.
type Server struct {
	mu       sync.Mutex
	zxid     int64
	lastSID  int64
	nodes    map[string]*znode
	dataW    map[string][]dataWatch  // WaitChange watches by path
	trackers map[string][]*tracker   // Persistent.TrackDir's trackings by directory
	trees    []Watch                 // Persistent's watches, by session and directory
	childW   map[string][]childWatch // ChildrenW watches by path
	changed  chan struct{}           // closed and replaced on every change
	calls    map[Op]int
	blocked  map[blocker]int

	history []Change
	watches []Watch // every data watch set, in order
	childWs []Watch // every child watch set, in order
}

type znode struct {
	data      []byte
	stat      client.Stat
	container bool
	children  map[string]struct{}
}

type childWatch struct {
	sid int64
	ch  chan client.Event
}

type blocker struct {
	c  *Conn
	op Op
}

// Change is a node created or deleted in the tree.
type Change struct {
	Created bool // false: deleted
	Path    string
	Owner   int64 // the node's ephemeralOwner
	Zxid    int64 // the zxid of the create or the delete
}

// Watch is a watch a session set on a path.
type Watch struct {
	Session int64
	Path    string
}

// NewServer returns an empty tree (only "/").
func NewServer() *Server {
	return &Server{
		nodes:    map[string]*znode{"/": {children: map[string]struct{}{}}},
		dataW:    map[string][]dataWatch{},
		trackers: map[string][]*tracker{},
		childW:   map[string][]childWatch{},
		changed:  make(chan struct{}),
		calls:    map[Op]int{},
		blocked:  map[blocker]int{},
	}
}

// changedLocked wakes every Await.
func (s *Server) changedLocked() {
	close(s.changed)
	s.changed = make(chan struct{})
}

// Await blocks until cond holds or ctx ends. cond is evaluated again after
// every change of the Server's state (nodes, watches, calls, blocked
// callers, epochs), so no change is missed; it must not block.
func (s *Server) Await(ctx context.Context, cond func() bool) error {
	for {
		s.mu.Lock()
		ch := s.changed
		s.mu.Unlock()
		if cond() {
			return nil
		}
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// createLocked creates path (with the parent's sequence number appended if
// seq) and returns the new node's path.
func (s *Server) createLocked(p string, data []byte, owner int64, seq, container bool) (string, *znode, error) {
	dir := path.Dir(p)
	parent := s.nodes[dir]
	switch {
	case parent == nil:
		return "", nil, client.ErrNoNode
	case parent.stat.EphemeralOwner != 0:
		return "", nil, client.ErrNoChildrenForEphemerals
	}
	if seq {
		p += fmt.Sprintf("%010d", parent.stat.Cversion)
	}
	if s.nodes[p] != nil {
		return "", nil, client.ErrNodeExists
	}
	s.zxid++
	n := &znode{
		data:      slices.Clone(data),
		stat:      client.Stat{Czxid: s.zxid, Mzxid: s.zxid, Pzxid: s.zxid, EphemeralOwner: owner, DataLength: int32(len(data))},
		container: container,
		children:  map[string]struct{}{},
	}
	s.nodes[p] = n
	parent.children[path.Base(p)] = struct{}{}
	parent.stat.Cversion++
	parent.stat.NumChildren++
	parent.stat.Pzxid = s.zxid
	s.history = append(s.history, Change{Created: true, Path: p, Owner: owner, Zxid: s.zxid})
	s.fireChildLocked(dir, client.EventNodeChildrenChanged)
	s.changedLocked()
	return p, n, nil
}

func (s *Server) deleteLocked(p string) error {
	n := s.nodes[p]
	switch {
	case n == nil:
		return client.ErrNoNode
	case len(n.children) > 0:
		return client.ErrNotEmpty
	}
	s.zxid++
	delete(s.nodes, p)
	parent := s.nodes[path.Dir(p)]
	delete(parent.children, path.Base(p))
	parent.stat.Cversion++
	parent.stat.NumChildren--
	parent.stat.Pzxid = s.zxid
	s.history = append(s.history, Change{Path: p, Owner: n.stat.EphemeralOwner, Zxid: s.zxid})
	s.fireDataLocked(p, queue.Deleted)
	s.fireTrackersLocked(p)
	s.fireChildLocked(p, client.EventNodeDeleted)
	s.fireChildLocked(path.Dir(p), client.EventNodeChildrenChanged)
	s.changedLocked()
	return nil
}

// deleteOwnedLocked deletes p if it exists and session sid owns it.
func (s *Server) deleteOwnedLocked(p string, sid int64) {
	if n := s.nodes[p]; n != nil && n.stat.EphemeralOwner == sid {
		_ = s.deleteLocked(p) // an ephemeral node has no children
	}
}

// dataWatch is one WaitChange's watch: announces is whether the node's
// data marked it as announcing its release when the watch was set, as the
// real Conn reads it then.
type dataWatch struct {
	ch        chan queue.Change // buffered 1
	announces bool
}

func (s *Server) fireDataLocked(p string, what queue.Change) {
	for _, w := range s.dataW[p] {
		got := what
		if got == queue.Released && !w.announces {
			got = queue.LookAgain
		}
		w.ch <- got
		close(w.ch)
	}
	delete(s.dataW, p)
}

func (s *Server) fireChildLocked(p string, t client.EventType) {
	for _, w := range s.childW[p] {
		w.ch <- client.Event{Type: t, Path: p, Watched: p, Kind: client.WatchChildren}
	}
	delete(s.childW, p)
}

func (s *Server) listLocked(p string) []string {
	return slices.Sorted(maps.Keys(s.nodes[p].children))
}

// ExpireSession deletes every ephemeral node of session sid and ends its
// child watches, as the server does when it expires the session. The
// Conn that had the session learns nothing: see Conn.NewSession.
func (s *Server) ExpireSession(sid int64) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.expireLocked(sid)
}

func (s *Server) expireLocked(sid int64) {
	for _, p := range slices.Sorted(maps.Keys(s.nodes)) {
		s.deleteOwnedLocked(p, sid)
	}
	for p, ws := range s.childW {
		ws = slices.DeleteFunc(ws, func(w childWatch) bool {
			if w.sid == sid {
				w.ch <- client.Event{Type: client.EventNotWatching, Path: p, Watched: p, Kind: client.WatchChildren, Err: client.ErrSessionExpired}
			}
			return w.sid == sid
		})
		s.childW[p] = ws
	}
	s.changedLocked()
}

// Reap deletes p if it is an empty CONTAINER node, as the server's
// container manager does, and reports whether it did.
func (s *Server) Reap(p string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[p]
	if n == nil || !n.container || len(n.children) > 0 {
		return false
	}
	return s.deleteLocked(p) == nil
}

// SetData replaces p's data, firing its data watches.
func (s *Server) SetData(p string, data []byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[p]
	if n == nil {
		return client.ErrNoNode
	}
	s.setDataLocked(n, p, data)
	s.changedLocked()
	return nil
}

func (s *Server) setDataLocked(n *znode, p string, data []byte) {
	s.zxid++
	n.data = slices.Clone(data)
	n.stat.Mzxid, n.stat.Version, n.stat.DataLength = s.zxid, n.stat.Version+1, int32(len(data))
	s.fireDataLocked(p, queue.Released)
}

// releaseLocked is the multi of an announced release: set p's data, then
// delete it, in one transaction.
func (s *Server) releaseLocked(p string) error {
	n := s.nodes[p]
	if n == nil {
		return client.ErrNoNode
	}
	s.setDataLocked(n, p, nil)
	return s.deleteLocked(p)
}

// czxid returns the czxid of the node at p, 0 if there is none.
func (s *Server) czxid(p string) int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := s.nodes[p]; n != nil {
		return n.stat.Czxid
	}
	return 0
}
