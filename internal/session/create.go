package session

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/go-zookeeper/zk"
)

// This file is how a node of ours comes to exist: the create requests,
// pipelined behind the parents they need and ahead of the listing that
// follows, and the side channel through which the wire observer reports
// each create's czxid and owner. Every create is accounted for until its
// node is known (DESIGN.md).

// created is what the wire observer saw of a create's reply.
type created struct {
	zxid int64 // the create's zxid: the node's czxid
	sid  int64 // the session the create ran in: the node's ephemeralOwner
}

// createRec is a create zklock sent and awaits the reply of. Protected
// request paths are unique (a fresh uuid each), so the request path names
// exactly one create in flight.
type createRec struct {
	c    created
	seen bool // the observer matched the reply
}

// createResult is the outcome of one create: the node's name and what the
// wire observer (or a stat) says of it.
type createResult struct {
	name string
	c    created
	err  error
}

// CreateSeq sends the create on its own goroutine, so that the caller can
// leave when ctx ends. The create may still succeed then: CreateSeq waits
// for its outcome and deletes the node it made, for at most the cleanup
// grace, so that in the common case nothing is left when it returns.
func (c *Conn) CreateSeq(ctx context.Context, path string, data []byte) (string, int64, int64, error) {
	r, err := c.awaitCreate(ctx, path, c.startCreate(path, data, zk.FlagEphemeral|zk.FlagSequence, stage{}))
	return r.name, r.c.zxid, r.c.sid, err
}

// CreateEphemeral is CreateSeq for a node whose exact name is given.
func (c *Conn) CreateEphemeral(ctx context.Context, path string, data []byte) (int64, int64, error) {
	r, err := c.awaitCreate(ctx, path, c.startCreate(path, data, zk.FlagEphemeral, stage{}))
	return r.c.zxid, r.c.sid, err
}

// awaitCreate waits for a create's outcome or for ctx to end; then it
// removes the node the create made, or may have made, waiting for that at
// most the cleanup grace.
func (c *Conn) awaitCreate(ctx context.Context, path string, ch <-chan createResult) (createResult, error) {
	select {
	case r := <-ch:
		return r, r.err
	case <-ctx.Done():
		done := make(chan struct{})
		if !c.spawn(func() { defer close(done); c.cleanAbandoned(ch, path) }) {
			close(done)
		}
		c.settle(done, path)
		return createResult{}, ctx.Err()
	}
}

// CreateAndList sends the CONTAINER creates of parents, our create and the
// listing of its parent as a pipeline: each request is queued once the one
// before is on the wire (or has returned), so they reach the server in
// order, one round trip for all.
func (c *Conn) CreateAndList(ctx context.Context, parents []string, path string, data []byte) (string, int64, int64, []string, error) {
	all := parents
	parents = c.dirs.unknown(parents)
	stop := make(chan struct{}) // closed once the create has returned
	var prev stage
	perrs := make([]<-chan error, len(parents))
	for i, p := range parents {
		var perr chan error
		prev, perr = c.sendContainer(p, prev)
		perrs[i] = perr
	}
	sent, forget := c.onSend(path)
	defer forget()
	created := c.startCreate(path, data, zk.FlagEphemeral|zk.FlagSequence, prev)
	listed := make(chan []string, 1)
	go func() {
		select {
		case <-sent: // the create is on the wire: a request queued now follows it
		case <-stop:
			listed <- nil
			return
		}
		names, _, err := c.zk.Children(path[:strings.LastIndexByte(path, '/')])
		if err != nil {
			names = nil
		}
		listed <- names
	}()
	r, err := c.awaitCreate(ctx, path, created)
	// A create the observer did not see sent (a path longer than it
	// parses) has no listing behind it: the caller lists.
	close(stop)
	if errors.Is(err, zk.ErrNoNode) {
		c.dirs.forget(all) // one was reaped: the next turn creates them all
		err = parentErr(parents, perrs, err)
	}
	if err != nil {
		return "", 0, 0, nil, err
	}
	c.dirs.know(all)
	select {
	case names := <-listed: // answered right after the create
		return r.name, r.c.zxid, r.c.sid, names, nil
	case <-ctx.Done():
		return r.name, r.c.zxid, r.c.sid, nil, nil
	}
}

// stage is a request of a pipeline: sent is closed once it is on the wire,
// done once it has returned. The zero stage is no request.
type stage struct{ sent, done <-chan struct{} }

// wait returns once the request is on the wire, or has returned without
// being sent (the connection dropped): a request queued after that
// follows it.
func (s stage) wait() {
	if s.done == nil {
		return
	}
	select {
	case <-s.sent:
	case <-s.done:
	}
}

// sendContainer creates the CONTAINER node p, once after is on the wire.
// The error (nil for a node that exists) arrives on the channel.
func (c *Conn) sendContainer(p string, after stage) (stage, chan error) {
	sent, forget := c.onSend(p)
	done := make(chan struct{})
	errc := make(chan error, 1)
	go func() {
		defer close(done)
		defer forget()
		after.wait()
		_, err := c.zk.CreateContainer(p, nil, zk.FlagContainer, c.cfg.ACL)
		if errors.Is(err, zk.ErrNodeExists) {
			err = nil
		}
		errc <- err
	}()
	return stage{sent, done}, errc
}

// parentErr explains a create that found no parent: the first parent
// create that failed, if one did (no permission, say), else err.
func parentErr(parents []string, perrs []<-chan error, err error) error {
	for i, perr := range perrs {
		if e := <-perr; e != nil && !transient(e) {
			return wrapOp("create container", parents[i], connLoss(e))
		}
	}
	return err
}

// startCreate sends one create of an ephemeral node, once after is on the
// wire, on a goroutine of its own, and delivers its outcome on the returned
// channel. It is never retried: the outcome of a create cut off by
// connection loss is unknown, and the queue resolves it by its protected
// name. The node's czxid and owner come from the wire observer, at no extra
// round trip. Every create it reports as successful is accounted for: when
// the observer could not match the reply (a request path longer than it
// parses), it asks the server for the node's stat rather than report a
// failure and leave a node nobody knows about.
func (c *Conn) startCreate(path string, data []byte, flags int32, after stage) <-chan createResult {
	rec := &createRec{}
	c.mu.Lock()
	c.creates[path] = rec
	c.mu.Unlock()
	ch := make(chan createResult, 1)
	go func() {
		after.wait()
		name, err := c.zk.Create(path, data, flags, c.cfg.ACL)
		c.mu.Lock()
		delete(c.creates, path)
		cr, seen := rec.c, rec.seen
		c.mu.Unlock()
		switch {
		case errors.Is(err, zk.ErrClosing):
			err = ErrClosed
		case err != nil:
			err = wrapOp("create", path, connLoss(err))
		case !seen:
			cr, err = c.statCreated(name)
		}
		ch <- createResult{name, cr, err}
	}()
	return ch
}

// statCreated reads the czxid and owner of a node we just created. Exists
// needs no permission, whatever ACL the node has. It retries until the
// session closes: the node exists, and the caller must learn of it. A node
// gone already went with an expired session (or somebody deleted it).
func (c *Conn) statCreated(name string) (created, error) {
	st, err := retry(c.bg, c, func() (*zk.Stat, error) {
		ok, st, err := c.zk.Exists(name)
		if err == nil && !ok {
			st = nil
		}
		return st, err
	})
	switch {
	case err != nil:
		return created{}, wrapOp("stat created node", name, err)
	case st == nil:
		return created{}, wrapOp("stat created node", name, zk.ErrNoNode)
	}
	return created{zxid: st.Czxid, sid: st.EphemeralOwner}, nil
}

func (c *Conn) CreateContainer(ctx context.Context, path string) error {
	return c.createContainer(ctx, path)
}

// createContainer creates path as a CONTAINER node (reaped by the server once
// empty); a node that already exists is fine.
func (c *Conn) createContainer(ctx context.Context, path string) error {
	err := c.do(ctx, func() error {
		_, err := c.zk.CreateContainer(path, nil, zk.FlagContainer, c.cfg.ACL)
		return err
	})
	if errors.Is(err, zk.ErrNodeExists) {
		return nil
	}
	return wrapOp("create container", path, err)
}

// Created records what the wire saw of a create's reply, for the create
// that registered its request path (startCreate). Creates nobody
// registered (containers, plain Conn use) are not recorded, so nothing
// accumulates and no record is ever dropped to bound the map.
func (o *observer) Created(path string, zxid, sid int64) {
	c := (*Conn)(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if r, ok := c.creates[path]; ok {
		r.c, r.seen = created{zxid: zxid, sid: sid}, true
	}
}

func (o *observer) Sending(path string) {
	c := (*Conn)(o)
	c.mu.Lock()
	defer c.mu.Unlock()
	if ch, ok := c.sending[path]; ok {
		close(ch)
		delete(c.sending, path)
	}
}

// onSend returns a channel closed when a create request for path is
// written to the connection, and a function that forgets the request.
func (c *Conn) onSend(path string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	c.mu.Lock()
	c.sending[path] = ch
	c.mu.Unlock()
	return ch, func() {
		c.mu.Lock()
		if c.sending[path] == ch {
			delete(c.sending, path)
		}
		c.mu.Unlock()
	}
}

// dirCache remembers the CONTAINER parents our creates found or made, so
// that a create on a known path is sent alone and one on a new path with
// the parent creates it needs pipelined ahead of it: one round trip either
// way. An entry may be stale (the server reaps an empty container): the
// create then fails with NoNode, the entries are forgotten, and the next
// attempt creates the parents. So a lost or stale entry costs a round
// trip, never correctness; the cache is bounded by dropping entries.
type dirCache struct {
	mu sync.Mutex
	m  map[string]struct{}
}

// maxDirs bounds the cache: about 100 bytes an entry.
const maxDirs = 4096

// unknown returns the dirs the cache does not hold, in order.
func (d *dirCache) unknown(dirs []string) []string {
	d.mu.Lock()
	defer d.mu.Unlock()
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
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.m == nil {
		d.m = make(map[string]struct{})
	}
	for _, p := range dirs {
		if _, ok := d.m[p]; ok {
			continue
		}
		for k := range d.m { // full: drop one, any
			if len(d.m) < maxDirs {
				break
			}
			delete(d.m, k)
		}
		d.m[p] = struct{}{}
	}
}

func (d *dirCache) forget(dirs []string) {
	d.mu.Lock()
	defer d.mu.Unlock()
	for _, p := range dirs {
		delete(d.m, p)
	}
}
