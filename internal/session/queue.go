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
	r, err := c.awaitCreate(ctx, path, c.startCreate(path, data, zk.FlagEphemeral|zk.FlagSequence))
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

func (c *Conn) CreateAndList(ctx context.Context, path string, data []byte) (string, int64, int64, []string, error) {
	sent, forget := c.onSend(path)
	defer forget()
	stop := make(chan struct{})
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
	name, czxid, owner, err := c.CreateSeq(ctx, path, data)
	close(stop)
	if err != nil {
		return "", 0, 0, nil, err
	}
	select {
	case names := <-listed: // answered right after the create
		return name, czxid, owner, names, nil
	case <-ctx.Done():
		return name, czxid, owner, nil, nil
	}
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

// WaitChange also returns (nil, as if path changed) when the current
// ownership epoch ends, so that the queue looks again under the next one. A
// watch cannot be trusted across a session expiry: go-zookeeper drops the
// old session's watches when it learns of the expiry, but a watch request
// queued while disconnected is sent afterwards, under the new session, and
// then fires only when the predecessor changes, leaving a waiter whose node
// expired asleep instead of re-enqueueing.
func (c *Conn) WaitChange(ctx context.Context, path string) error {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return err
	}
	if err := c.waitChange(ctx, path, ep.done); !errors.Is(err, errStopped) {
		return err
	}
	return nil // the epoch ended
}

func (c *Conn) Track(ep queue.Epoch, path string) bool {
	return c.track(ep.Key.(*epoch), path)
}

func (c *Conn) Untrack(ep queue.Epoch, path string) { c.untrack(ep.Key.(*epoch), path) }

// CreateEphemeral is CreateSeq for a node whose exact name is given.
func (c *Conn) CreateEphemeral(ctx context.Context, path string, data []byte) (int64, int64, error) {
	r, err := c.awaitCreate(ctx, path, c.startCreate(path, data, zk.FlagEphemeral))
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
