package chaos

import (
	"context"
	"fmt"
	"os"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// NodeLife is what the coordinator saw of one node under a lock path, on
// the clock of Now: when a listing first showed it, and by when it was
// gone (0: never seen gone). Gone is an upper bound: the earliest of a
// NodeDeleted notification (stamped as the client reads it, before any
// other work), a listing without it, or a read that found no node, on a
// connection to any of the servers that had listed it.
type NodeLife struct {
	Seen int64 `json:"seen"`
	Gone int64 `json:"gone,omitempty"`
}

// nodeRecord is one line of the watcher's file.
type nodeRecord struct {
	Path string `json:"p"`
	NodeLife
}

// nodeWatcher is the ground truth for the peer excuses: it records when
// each node in the directories where Curator and Kazoo workers hold (their
// lock and lease nodes) appeared and when it was gone, so that the checker
// excuses a peer's overlap only if the peer's node was gone before the
// rival acquired. It watches from the coordinator rather than reading the
// servers' transaction logs afterwards because the excuse needs an upper
// bound on the deletion, on the workers' clock: a NodeDeleted
// notification is sent once the server has applied the delete, and is
// stamped with Now as it is read, whereas a transaction log gives the
// leader's wall-clock time when it proposed the delete, a lower bound
// (during a leader isolation a delete may commit seconds later, or never).
//
// It must survive the faults and see deletions no later than a rival does,
// whichever server the rival uses: it holds one session on each server,
// each pinned to it (so that one session's view never goes back) and
// straight to its client port (client faults cannot touch it), and takes
// the earliest evidence of any. A rival is granted on its own server's
// state, after that server queued the notification to every watcher, and
// a zklock waiter reads once more after its watch fires on a plain
// deletion. Each session keeps a child watch on each directory and a data
// watch on each node (getData: no watch is left on a node already gone),
// lists a directory again when its watch fires, when a session is made or
// restored (a restored watch is not trusted alone), and every 2s. It creates nothing, and its watches sit beside the workers'
// without changing whom a change wakes: each waiter still watches the node
// ahead of it only. Nodes with zklock's data (host:pid) are not written
// out; only the peers' matter.
type nodeWatcher struct {
	dirs  []string
	self  string // zklock's node data prefix on this machine: "host:"
	log   *Log
	mu    sync.Mutex
	table map[string]*watchedNode
	conns []*watchConn
	wg    sync.WaitGroup
	stop  context.CancelFunc
	once  sync.Once
}

type watchedNode struct {
	NodeLife
	zklock bool // its data is zklock's: not written out
}

// startNodeWatcher watches dirs from a session on each of servers, writing
// the nodes it saw gone to logPath.
func startNodeWatcher(ctx context.Context, servers, dirs []string, logPath string) (*nodeWatcher, error) {
	log, err := CreateLog(logPath)
	if err != nil {
		return nil, err
	}
	host, _ := os.Hostname()
	ctx, cancel := context.WithCancel(ctx)
	w := &nodeWatcher{dirs: dirs, self: host + ":", log: log, table: map[string]*watchedNode{}, stop: cancel}
	for _, s := range servers {
		c := &watchConn{w: w, known: map[string]map[string]bool{}, wake: make(chan struct{}, 1), all: true}
		// Bounded: the servers served a moment ago, and a server that
		// died since (the CI run of 1aed6e3: one gone 2.5s after the
		// ensemble served) would otherwise hold the run for its whole
		// ctx (10 minutes) before saying so.
		dctx, dcancel := context.WithTimeout(ctx, time.Minute)
		conn, err := client.Dial(dctx, client.Config{
			Servers: []string{s}, Timeout: SessionTimeout,
			// Tried again every 50ms while its server is down: a second's
			// pause (the default after a few failed attempts) left the
			// watcher blind that long after each server fault (a 3-minute
			// run: 7 of 1,268 peer nodes unseen, all during a leader kill
			// or isolation).
			MaxReconnectDelay: 50 * time.Millisecond,
			OnState:           c.state,
			OnWatch:           c.event,
		})
		dcancel()
		if err != nil {
			w.close()
			return nil, fmt.Errorf("chaos: node watcher: %w", err)
		}
		c.conn = conn
		w.conns = append(w.conns, c)
		w.wg.Add(1)
		go func() { defer w.wg.Done(); c.run(ctx) }()
	}
	w.wg.Add(1)
	go func() { defer w.wg.Done(); w.flushLoop(ctx) }()
	return w, nil
}

// seen records that a listing at t showed p.
func (w *nodeWatcher) seen(p string, t int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.table[p]; n == nil {
		w.table[p] = &watchedNode{NodeLife: NodeLife{Seen: t}}
	}
}

// gone records that p was gone by t. A node no longer in the table was
// written out already, with an earlier time.
func (w *nodeWatcher) gone(p string, t int64) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.table[p]; n != nil && (n.Gone == 0 || t < n.Gone) {
		n.Gone = t
	}
}

// owner notes p's data: zklock's nodes are not written out.
func (w *nodeWatcher) owner(p string, data []byte) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if n := w.table[p]; n != nil && strings.HasPrefix(string(data), w.self) {
		n.zklock = true
	}
}

// flushLoop writes out, every second, the nodes gone for over a second
// (time for the other sessions' evidence to arrive, should it be earlier).
func (w *nodeWatcher) flushLoop(ctx context.Context) {
	for i := 0; i < 100_000_000 && ctx.Err() == nil; i++ {
		sleep(ctx, time.Second)
		w.flush(Now() - int64(time.Second))
	}
}

// flush writes out the nodes gone before t (every node, gone or not, when
// t is 0) and forgets them.
func (w *nodeWatcher) flush(t int64) {
	var out []nodeRecord
	w.mu.Lock()
	for p, n := range w.table {
		if t == 0 || (n.Gone != 0 && n.Gone < t) {
			if !n.zklock {
				out = append(out, nodeRecord{Path: p, NodeLife: n.NodeLife})
			}
			delete(w.table, p)
		}
	}
	w.mu.Unlock()
	for _, r := range out {
		_ = w.log.Add(r) // a record lost here only withholds an excuse
	}
}

// close stops the sessions and writes out every node. The sessions close
// first: a request of a session waiting for its server returns only then.
func (w *nodeWatcher) close() {
	w.once.Do(func() {
		w.stop()
		for _, c := range w.conns {
			c.conn.Close()
		}
		w.wg.Wait()
		w.flush(0)
		_ = w.log.Close()
	})
}

// readNodes returns what the watcher file at p says of the nodes named in
// want: the earliest sighting and the earliest evidence of the deletion
// over its lines (a session behind the others may list a node again).
func readNodes(p string, want map[string]bool) (map[string]NodeLife, error) {
	recs, err := readFile[nodeRecord](p)
	if err != nil {
		return nil, err
	}
	out := map[string]NodeLife{}
	for _, r := range recs {
		if !want[r.Path] {
			continue
		}
		n, ok := out[r.Path]
		if !ok || r.Seen < n.Seen {
			n.Seen = r.Seen
		}
		if r.Gone != 0 && (n.Gone == 0 || r.Gone < n.Gone) {
			n.Gone = r.Gone
		}
		out[r.Path] = n
	}
	return out, nil
}

// dirOf returns the watched directory p is in, or "".
func (w *nodeWatcher) dirOf(p string) string {
	d := path.Dir(p)
	for _, x := range w.dirs {
		if x == d {
			return d
		}
	}
	return ""
}

// nodesFile is the node watcher's record, in the run's log directory.
const nodesFile = "nodes.jsonl"

// peerDirs returns the directories where the peer workers' hold nodes are:
// Curator's mutex and RW nodes sit under their lock paths, its semaphore's
// leases under "leases"; Kazoo's lock nodes under the reentrant path.
func (c *coordinator) peerDirs() []string {
	var dirs []string
	p := c.admin.paths
	if c.cfg.Curator > 0 {
		dirs = append(dirs, p.Lock("mutex"), p.Lock("rwmutex"), p.Lock("semaphore")+"/leases")
	}
	if c.cfg.Kazoo > 0 {
		dirs = append(dirs, p.Lock("reentrant"))
	}
	return dirs
}

// peerNodes returns the nodes the peer workers logged at their acquires.
func peerNodes(evs []Event) map[string]bool {
	m := map[string]bool{}
	for _, e := range evs {
		if e.Ev == EvAcquire && e.Node != "" {
			m[e.Node] = true
		}
	}
	return m
}
