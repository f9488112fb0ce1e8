package zklock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
)

// queueConn gives the shared queue algorithm (internal/queue) the session's
// ctx-aware, retrying operations without exporting them from Session.
type queueConn struct{ s *Session }

var _ queue.Conn = queueConn{}

func (c queueConn) Epoch(ctx context.Context) (queue.Epoch, error) {
	ep, err := c.s.awaitEpoch(ctx)
	if err != nil {
		return queue.Epoch{}, err
	}
	return queue.Epoch{SessionID: ep.sid, Done: ep.done, Key: ep}, nil
}

type createResult struct {
	name string
	c    created
	err  error
}

// CreateSeq sends the create on its own goroutine, so that the caller can
// leave when ctx ends. The create may still succeed then: CreateSeq waits
// for its outcome and deletes the node it made, for at most the cleanup
// grace, so that in the common case nothing is left when it returns.
func (c queueConn) CreateSeq(ctx context.Context, path string, data []byte) (string, int64, int64, error) {
	ch := make(chan createResult, 1)
	go func() {
		name, cr, err := c.s.createSeq(context.WithoutCancel(ctx), path, data)
		ch <- createResult{name, cr, err}
	}()
	select {
	case r := <-ch:
		return r.name, r.c.zxid, r.c.sid, r.err
	case <-ctx.Done():
		done := make(chan struct{})
		if !c.s.spawn(func() { defer close(done); c.cleanAbandoned(ch, path) }) {
			close(done)
		}
		c.settle(done, path)
		return "", 0, 0, ctx.Err()
	}
}

func (c queueConn) CreateAndList(ctx context.Context, path string, data []byte) (string, int64, int64, []string, error) {
	sent, forget := c.s.onSend(path)
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
		names, _, err := c.s.conn.Children(path[:strings.LastIndexByte(path, '/')])
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
func (c queueConn) cleanAbandoned(ch <-chan createResult, path string) {
	var r createResult
	select {
	case r = <-ch:
	case <-c.s.bg.Done():
		return
	}
	switch {
	case r.err == nil:
		<-c.s.goDelete(r.name, r.c.sid)
	case transient(r.err):
		c.deletePrefixed(path)
	}
}

// deletePrefixed deletes, once connected, every child of path's parent whose
// name starts with path's protected name, returning once they are gone.
func (c queueConn) deletePrefixed(path string) {
	i := strings.LastIndexByte(path, '/')
	dir, prefix := path[:i], path[i+1:]
	ctx := c.s.bg
	ep, err := c.s.awaitEpoch(ctx)
	if err != nil {
		return
	}
	names, _, err := c.s.children(ctx, dir)
	if err != nil {
		return
	}
	for _, n := range names {
		if strings.HasPrefix(n, prefix) {
			<-c.s.goDelete(dir+"/"+n, ep.sid)
		}
	}
}

func (c queueConn) CreateContainer(ctx context.Context, path string) error {
	return c.s.createContainer(ctx, path)
}

func (c queueConn) Children(ctx context.Context, path string) ([]string, error) {
	names, _, err := c.s.children(ctx, path)
	return names, err
}

func (c queueConn) Stat(ctx context.Context, path string) (*zk.Stat, error) {
	_, st, err := c.s.get(ctx, path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	return st, err
}

func (c queueConn) Get(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	return c.s.get(ctx, path)
}

func (c queueConn) Delete(ctx context.Context, path string) error { return c.s.delete(ctx, path) }

// Discard starts a background delete and waits for it at most the cleanup
// grace, so that in the common case (server reachable) the node is gone
// when the failed call returns.
func (c queueConn) Discard(path string, sid int64) {
	c.settle(c.s.goDelete(path, sid), path)
}

// settle waits for a cleanup to finish, for at most the cleanup grace:
// half the session timeout, at most 2s. A cleanup that takes longer (the
// server unreachable) goes on in the background until it succeeds or the
// session ends, which removes the node too.
func (c queueConn) settle(done <-chan struct{}, path string) {
	t := time.NewTimer(cleanupGrace(c.s.Timeout()))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		c.s.log.Warn("zklock: node delete continues in the background", "path", path)
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
func (c queueConn) WaitChange(ctx context.Context, path string) error {
	ep, err := c.s.awaitEpoch(ctx)
	if err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		select {
		case <-ep.done:
			cancel()
		case <-wctx.Done():
		}
	}()
	err = c.s.waitChange(wctx, path)
	if err != nil && ctx.Err() == nil && wctx.Err() != nil {
		return nil // the epoch ended
	}
	return err
}

func (c queueConn) Track(ep queue.Epoch, path string) bool {
	return c.s.track(ep.Key.(*epoch), path)
}

func (c queueConn) Untrack(ep queue.Epoch, path string) { c.s.untrack(ep.Key.(*epoch), path) }

func (c queueConn) CreateEphemeral(ctx context.Context, path string, data []byte) (int64, int64, error) {
	_, cr, err := c.s.createEphemeral(ctx, path, data, zk.FlagEphemeral)
	return cr.zxid, cr.sid, err
}

func (c queueConn) ChildrenStat(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	return c.s.children(ctx, path)
}

func (c queueConn) ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	type res struct {
		names []string
		stat  *zk.Stat
		ch    <-chan zk.Event
	}
	r, err := retry(ctx, c.s, func() (res, error) {
		names, st, ch, err := c.s.conn.ChildrenW(path)
		return res{names, st, ch}, err
	})
	return r.names, r.stat, r.ch, wrapOp("list", path, err)
}

// mapQueueErr turns the queue's internal errors into zklock's sentinels.
func mapQueueErr(err error) error {
	var le *queue.LockedError
	var ke *queue.KindError
	switch {
	case errors.As(err, &le):
		return &LockedError{Holder: le.Holder.Name, Session: le.Owner, Data: le.Data}
	case errors.As(err, &ke):
		return wrongKind(ke.Dir, ke.Found)
	case errors.Is(err, queue.ErrLost):
		return ErrLockLost
	}
	return err
}

// LockedError is returned by TryLock when another owner holds the lock; it
// wraps ErrLocked.
type LockedError struct {
	Holder  string // the holder's node name
	Session int64  // the holder's session id (0 if unknown)
	Data    []byte // the holder's node data (see WithData)
}

// Error names the holder, its session and its data.
func (e *LockedError) Error() string {
	return fmt.Sprintf("%v: held by %s (session 0x%x, data %q)", ErrLocked, e.Holder, e.Session, e.Data)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }
