package session

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/zklock/zklock/internal/client"
)

// This file is how a node of ours comes to exist: the create requests,
// pipelined behind the parents they need and ahead of the listing that
// follows. Every create is accounted for until its node is known
// (DESIGN.md): a create is a client.Call, which is never abandoned, so its
// outcome is always learnt, even after its caller gave up; its reply
// (create2) carries the node's czxid and owner.

// createResult is the outcome of one create: the node's name, its czxid
// and the session that owns it.
type createResult struct {
	name       string
	czxid, sid int64
}

// CreateSeq creates an ephemeral sequential node. The caller may leave
// when ctx ends; the create may still succeed then: CreateSeq waits for its
// outcome and deletes the node it made, for at most the cleanup grace, so
// that in the common case nothing is left when it returns.
func (c *Conn) CreateSeq(ctx context.Context, path string, data []byte) (string, int64, int64, error) {
	r, err := c.awaitCreate(ctx, path, c.cl.GoCreate(path, data, client.ModeEphemeralSequential, c.cfg.ACL))
	return r.name, r.czxid, r.sid, err
}

// CreateEphemeral is CreateSeq for a node whose exact name is given.
func (c *Conn) CreateEphemeral(ctx context.Context, path string, data []byte) (int64, int64, error) {
	r, err := c.awaitCreate(ctx, path, c.cl.GoCreate(path, data, client.ModeEphemeral, c.cfg.ACL))
	return r.czxid, r.sid, err
}

// awaitCreate waits for a create's outcome or for ctx to end; then it
// removes the node the create made, or may have made, waiting for that at
// most the cleanup grace. A create is never retried: the outcome of one
// cut off by connection loss is unknown, and the queue resolves it by its
// protected name.
func (c *Conn) awaitCreate(ctx context.Context, path string, k *client.Call) (createResult, error) {
	select {
	case <-k.Done():
		return created(k)
	case <-ctx.Done():
		done := make(chan struct{})
		if !c.spawn(func() { defer close(done); c.cleanAbandoned(k, path) }) {
			close(done)
		}
		c.settle(done, path)
		return createResult{}, ctx.Err()
	}
}

// created reads a completed create.
func created(k *client.Call) (createResult, error) {
	if errors.Is(k.Err, client.ErrClosed) {
		return createResult{}, ErrClosed
	}
	if k.Err != nil {
		return createResult{}, k.Err
	}
	return createResult{name: k.Path, czxid: k.Stat.Czxid, sid: k.Stat.EphemeralOwner}, nil
}

// CreateAndList sends the CONTAINER creates of parents, our create and the
// listing of its parent as a pipeline: queued one after the other without
// waiting, they reach the server in order and are answered in order, one
// round trip for all.
func (c *Conn) CreateAndList(ctx context.Context, parents []string, path string, data []byte) (string, int64, int64, []string, int64, error) {
	r, listed, err := c.createThen(ctx, parents, path, data, c.cl.GoChildren)
	if err != nil {
		return "", 0, 0, nil, 0, err
	}
	select {
	case <-listed.Done(): // answered right after the create
		if listed.Err != nil {
			return r.name, r.czxid, r.sid, nil, 0, nil // the caller lists
		}
		c.dirs.refreshCzxid(parentOf(path), listed.Stat.Czxid)
		return r.name, r.czxid, r.sid, listed.Children, listed.Stat.Czxid, nil
	case <-ctx.Done():
		return r.name, r.czxid, r.sid, nil, 0, nil
	}
}

// createThen sends the CONTAINER creates of parents, our create and the
// request then makes of its parent as one pipeline, and waits for the
// create; then's Call is answered right after it.
func (c *Conn) createThen(ctx context.Context, parents []string, path string, data []byte,
	then func(parent string) *client.Call) (createResult, *client.Call, error) {
	all := parents
	parents = c.dirs.unknown(parents)
	calls := make([]*client.Call, len(parents))
	for i, p := range parents {
		calls[i] = c.cl.GoCreate(p, nil, client.ModeContainer, c.cfg.ACL)
	}
	create := c.cl.GoCreate(path, data, client.ModeEphemeralSequential, c.cfg.ACL)
	after := then(parentOf(path))
	r, err := c.awaitCreate(ctx, path, create)
	if errors.Is(err, client.ErrNoNode) {
		c.dirs.forget(all) // one was reaped: the next turn creates them all
		err = parentErr(calls, err)
	}
	if err != nil {
		return r, nil, err
	}
	c.dirs.know(all)
	return r, after, nil
}

// parentOf returns the path of p's parent.
func parentOf(p string) string { return p[:strings.LastIndexByte(p, '/')] }

// KnownCzxid returns the czxid of dir, the last of dirs (a lock path's
// ancestors, then the path), as a reply last told it (a create's
// pipelined look at its parent, ReadCzxid), or, when none did or the dir
// was found reaped since, reads it, making dirs (CONTAINER nodes) first
// if it is missing: one read for all the calls that find it unknown at
// once, so the result may predate the caller's call. A hint, which the
// caller checks.
func (c *Conn) KnownCzxid(ctx context.Context, dirs []string) (int64, error) {
	dir := dirs[len(dirs)-1]
	if z := c.dirs.czxid(dir); z != 0 {
		return z, nil
	}
	r, first := c.dirs.startRead(dir)
	if first {
		r.czxid, r.err = c.makeAndRead(ctx, dirs)
		c.dirs.endRead(dir, r)
		return r.czxid, r.err
	}
	select {
	case <-r.done:
		if r.err == nil {
			return r.czxid, nil
		}
		return c.makeAndRead(ctx, dirs) // its failure (its ctx's end, say) is not ours
	case <-ctx.Done():
		return 0, ctx.Err()
	}
}

// makeAndRead reads the czxid of the last of dirs; if it is missing, it
// creates dirs (CONTAINER nodes; existing ones are fine) and reads it
// behind them, one pipeline.
func (c *Conn) makeAndRead(ctx context.Context, dirs []string) (int64, error) {
	dir := dirs[len(dirs)-1]
	z, err := c.ReadCzxid(ctx, dir)
	if err != nil || z != 0 {
		return z, err
	}
	z, err = retry(ctx, c, func(ctx context.Context) (int64, error) {
		calls := make([]*client.Call, len(dirs))
		for i, p := range dirs {
			calls[i] = c.cl.GoCreate(p, nil, client.ModeContainer, c.cfg.ACL)
		}
		read := c.cl.GoExists(dir)
		select {
		case <-read.Done(): // answered after the creates
		case <-ctx.Done():
			return 0, ctx.Err()
		}
		if read.Err != nil {
			if errors.Is(read.Err, client.ErrNoNode) {
				return 0, parentErr(calls, read.Err)
			}
			return 0, read.Err
		}
		return read.Stat.Czxid, nil
	})
	if err != nil {
		return 0, wrapOp("create container", dir, err)
	}
	c.dirs.know(dirs)
	c.dirs.setCzxid(dir, z)
	return z, nil
}

// ReadCzxid reads dir's czxid, 0 when it does not exist, and remembers it
// for KnownCzxid: a read sent now, after every request the caller sent
// before.
func (c *Conn) ReadCzxid(ctx context.Context, dir string) (int64, error) {
	st, err := c.Stat(ctx, dir)
	switch {
	case err != nil:
		return 0, err
	case st == nil:
		c.dirs.forget([]string{dir})
		return 0, nil
	}
	c.dirs.setCzxid(dir, st.Czxid)
	return st.Czxid, nil
}

// parentErr explains a create that found no parent: the first parent
// create that failed, if one did (no permission, say), else err. The
// parents were answered before the create was.
func parentErr(calls []*client.Call, err error) error {
	for _, k := range calls {
		<-k.Done()
		if e := k.Err; e != nil && !errors.Is(e, client.ErrNodeExists) && !transient(e) {
			return e
		}
	}
	return err
}

func (c *Conn) CreateContainer(ctx context.Context, path string) error {
	return c.createContainer(ctx, path)
}

// createContainer creates path as a CONTAINER node (reaped by the server once
// empty); a node that already exists is fine.
func (c *Conn) createContainer(ctx context.Context, path string) error {
	err := c.do(ctx, func(ctx context.Context) error {
		_, _, err := c.cl.Create(ctx, path, nil, client.ModeContainer, c.cfg.ACL)
		return err
	})
	if errors.Is(err, client.ErrNodeExists) {
		return nil
	}
	return wrapOp("create container", path, err)
}

// dirCache remembers the CONTAINER parents our creates found or made, so
// that a create on a known path is sent alone and one on a new path with
// the parent creates it needs pipelined ahead of it: one round trip either
// way. An entry may be stale (the server reaps an empty container): the
// create then fails with NoNode, the entries are forgotten, and the next
// attempt creates the parents. So a lost or stale entry costs a round
// trip, never correctness; the cache is bounded by dropping entries.
// Every create of the session reads it, from as many goroutines as lock
// through the session, and almost every create finds its parents known: a
// read lock lets those look at once (a plain mutex was 32% of the mutex
// delay of 64 goroutines on one session, 2026-11-26); know writes only when
// a dir is new.
//
// It also keeps a dir's czxid once a reply told it (0: not known), which
// the sequence layout's node names carry (queue.Seq): a stale one costs a
// create made again, never correctness either.
type dirCache struct {
	mu    sync.RWMutex
	m     map[string]int64
	reads map[string]*czxidRead // KnownCzxid's reads in flight, by dir
}

// czxidRead is a read of a dir's czxid that concurrent KnownCzxid calls
// share: a session's handles that all lock a path for the first time at
// once send one read, not one each.
type czxidRead struct {
	done  chan struct{}
	czxid int64
	err   error
}

// startRead returns the read of dir's czxid in flight, or a new one, with
// first set, which the caller sends and ends (endRead).
func (d *dirCache) startRead(dir string) (r *czxidRead, first bool) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if r := d.reads[dir]; r != nil {
		return r, false
	}
	if d.reads == nil {
		d.reads = make(map[string]*czxidRead)
	}
	r = &czxidRead{done: make(chan struct{})}
	d.reads[dir] = r
	return r, true
}

// endRead publishes r, the read of dir startRead made.
func (d *dirCache) endRead(dir string, r *czxidRead) {
	d.mu.Lock()
	delete(d.reads, dir)
	d.mu.Unlock()
	close(r.done)
}

// maxDirs bounds the cache: about 100 bytes an entry.
const maxDirs = 4096

// unknown returns the dirs the cache does not hold, in order.
func (d *dirCache) unknown(dirs []string) []string {
	d.mu.RLock()
	defer d.mu.RUnlock()
	var out []string
	for i, p := range dirs {
		if _, ok := d.m[p]; !ok {
			if out == nil {
				out = make([]string, 0, len(dirs)-i)
			}
			out = append(out, p)
		}
	}
	return out
}

func (d *dirCache) know(dirs []string) {
	if d.unknown(dirs) == nil {
		return // the common case: nothing to write
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range dirs {
		if _, ok := d.m[p]; !ok {
			d.addLocked(p, 0)
		}
	}
}

// addLocked sets p's entry, dropping another when the cache is full.
func (d *dirCache) addLocked(p string, czxid int64) {
	if d.m == nil {
		d.m = make(map[string]int64)
	}
	if _, ok := d.m[p]; !ok {
		for k := range d.m { // full: drop one, any
			if len(d.m) < maxDirs {
				break
			}
			delete(d.m, k)
		}
	}
	d.m[p] = czxid
}

// czxid returns dir's czxid as last told, 0 when not known.
func (d *dirCache) czxid(dir string) int64 {
	d.mu.RLock()
	defer d.mu.RUnlock()
	return d.m[dir]
}

// refreshCzxid is setCzxid for a czxid a create's reply told: it replaces
// a known czxid that changed (the dir was re-created), and records none
// where none was known (a dir of another layout's creates; KnownCzxid
// reads it when asked), so that the creates of fresh paths, which every
// other layout makes, take no write lock for it.
func (d *dirCache) refreshCzxid(dir string, czxid int64) {
	if old := d.czxid(dir); old != 0 && old != czxid {
		d.setCzxid(dir, czxid)
	}
}

// setCzxid records that dir exists with czxid.
func (d *dirCache) setCzxid(dir string, czxid int64) {
	if d.czxid(dir) == czxid {
		return // the common case: nothing to write
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.addLocked(dir, czxid)
}

func (d *dirCache) forget(dirs []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range dirs {
		delete(d.m, p)
	}
}
