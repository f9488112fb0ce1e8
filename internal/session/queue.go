package session

import (
	"context"
	"errors"

	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
)

// Conn is what the queue recipes (internal/queue) run on: its reads and
// deletes retry transient errors within the caller's ctx.
var _ queue.Conn = (*Conn)(nil)

func (c *Conn) Epoch(ctx context.Context) (queue.Epoch, error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return queue.Epoch{}, err
	}
	return queue.Epoch{SessionID: ep.sid, Done: ep.done, Key: ep}, nil
}

// CreateSeq sends the create on its own goroutine, so that the caller can
// leave when ctx ends. The create may still succeed then: CreateSeq waits
// for its outcome and deletes the node it made, for at most the cleanup
// grace, so that in the common case nothing is left when it returns.
func (c *Conn) CreateSeq(ctx context.Context, path string, data []byte) (string, int64, int64, error) {
	r, err := c.awaitCreate(ctx, path, c.startCreate(path, data, zk.FlagEphemeral|zk.FlagSequence, stage{}))
	return r.name, r.c.zxid, r.c.sid, err
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
		err = parentErr(parents, perrs, err)
	}
	if err != nil {
		return "", 0, 0, nil, err
	}
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

// cleanAbandoned waits for the outcome of a create whose caller gave up, and
// removes the node it made, or may have made, returning once it is gone.
func (c *Conn) cleanAbandoned(ch <-chan createResult, path string) {
	var r createResult
	select {
	case r = <-ch:
	case <-c.bg.Done():
		return
	}
	switch {
	case r.err == nil:
		<-c.goDelete(r.name, r.c.sid)
	case transient(r.err):
		c.deletePrefixed(path)
	}
}

// deletePrefixed deletes, once connected, every child of path's parent whose
// name starts with path's protected name, returning once they are gone.
func (c *Conn) deletePrefixed(path string) {
	i := strings.LastIndexByte(path, '/')
	dir, prefix := path[:i], path[i+1:]
	ctx := c.bg
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return
	}
	names, _, err := c.children(ctx, dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			<-c.goDelete(dir+"/"+n, ep.sid)
		}
	}
}

func (c *Conn) CreateContainer(ctx context.Context, path string) error {
	return c.createContainer(ctx, path)
}

func (c *Conn) Children(ctx context.Context, path string) ([]string, error) {
	names, _, err := c.children(ctx, path)
	return names, err
}

func (c *Conn) Stat(ctx context.Context, path string) (*zk.Stat, error) {
	_, st, err := c.get(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return st, err
}

func (c *Conn) Get(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	return c.get(ctx, path)
}

func (c *Conn) Delete(ctx context.Context, path string) error { return c.delete(ctx, path, nil) }

// DeleteUntil is Delete that also gives up once stop is closed.
func (c *Conn) DeleteUntil(ctx context.Context, path string, stop <-chan struct{}) error {
	return c.delete(ctx, path, stop)
}

// ReleaseUntil is DeleteUntil with the release announced (see
// queue.Released): one multi sets the node's data, which fires a data
// watch with NodeDataChanged, and deletes the node. Retried after a
// connection loss it finds the node gone (the first attempt applied, or
// the session took it): deleted.
func (c *Conn) ReleaseUntil(ctx context.Context, path string, stop <-chan struct{}) error {
	ops := []any{&zk.SetDataRequest{Path: path, Version: -1}, &zk.DeleteRequest{Path: path, Version: -1}}
	_, err := retryUntil(ctx, c, stop, func() (struct{}, error) {
		_, err := c.zk.Multi(ops...)
		return struct{}{}, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return wrapOp("release", path, err)
}

// Discard starts a background delete and waits for it at most the cleanup
// grace, so that in the common case (server reachable) the node is gone
// when the failed call returns.
func (c *Conn) Discard(path string, sid int64) {
	c.settle(c.goDelete(path, sid), path)
}

// settle waits for a cleanup to finish, for at most the cleanup grace:
// half the session timeout, at most 2s. A cleanup that takes longer (the
// server unreachable) goes on in the background until it succeeds or the
// session ends, which removes the node too.
func (c *Conn) settle(done <-chan struct{}, path string) {
	t := time.NewTimer(cleanupGrace(c.Timeout()))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.log.Warn("zklock: node delete continues in the background", "path", path)
	}
}

// cleanupGrace is how long a failed or cancelled acquisition waits for the
// server to delete what it created before returning anyway.
func cleanupGrace(timeout time.Duration) time.Duration {
	return min(timeout/2, 2*time.Second)
}

// WaitChange also returns LookAgain when the current ownership epoch ends,
// so that the queue looks again under the next one. A watch cannot be
// trusted across a session expiry: go-zookeeper drops the old session's
// watches when it learns of the expiry, but a watch request queued while
// disconnected is sent afterwards, under the new session, and then fires
// only when the predecessor changes, leaving a waiter whose node expired
// asleep instead of re-enqueueing.
func (c *Conn) WaitChange(ctx context.Context, path string) (queue.Change, error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return queue.LookAgain, err
	}
	ch, err := c.waitChange(ctx, path, ep.done)
	if errors.Is(err, errStopped) {
		return queue.LookAgain, nil // the epoch ended
	}
	return ch, err
}

func (c *Conn) Track(ep queue.Epoch, path string) bool {
	return c.track(ep.Key.(*epoch), path)
}

func (c *Conn) Untrack(ep queue.Epoch, path string) { c.untrack(ep.Key.(*epoch), path) }

// CreateEphemeral is CreateSeq for a node whose exact name is given.
func (c *Conn) CreateEphemeral(ctx context.Context, path string, data []byte) (int64, int64, error) {
	r, err := c.awaitCreate(ctx, path, c.startCreate(path, data, zk.FlagEphemeral, stage{}))
	return r.c.zxid, r.c.sid, err
}

func (c *Conn) ChildrenStat(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	return c.children(ctx, path)
}

func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	type res struct {
		names []string
		stat  *zk.Stat
		ch    <-chan zk.Event
	}
	r, err := retry(ctx, c, func() (res, error) {
		names, st, ch, err := c.zk.ChildrenW(path)
		return res{names, st, ch}, err
	})
	return r.names, r.stat, r.ch, wrapOp("list", path, err)
}

// WaitExists blocks until path exists (nil at once if it does), ctx ends, or
// the Conn closes.
func (c *Conn) WaitExists(ctx context.Context, path string) error {
	type probe struct {
		ok bool
		ch <-chan zk.Event
	}
	p, err := retry(ctx, c, func() (probe, error) {
		ok, _, ch, err := c.zk.ExistsW(path)
		return probe{ok, ch}, err
	})
	if err != nil {
		return wrapOp("watch", path, err)
	}
	if p.ok {
		return nil
	}
	// go-zookeeper cannot remove a watch; one left behind when ctx ends is a
	// buffered channel with no goroutine, dropped by the client when the
	// watch fires or the session ends.
	select {
	case <-p.ch:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-c.done:
		return ErrClosed
	}
}

// SetData sets path's data if its version is version (-1: any), retrying
// transient errors (a retried set whose first attempt was applied fails with
// zk.ErrBadVersion, as a concurrent writer's would).
func (c *Conn) SetData(ctx context.Context, path string, data []byte, version int32) error {
	return wrapOp("set", path, c.do(ctx, func() error {
		_, err := c.zk.Set(path, data, version)
		return err
	}))
}
