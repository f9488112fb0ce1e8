package session

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
)

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

// transient reports whether err may go away by retrying the same request:
// the connection dropped (the request may or may not have been applied), no
// server answered, the session moved to another server, or the server
// reported connection loss (-4) or an operation timeout (-7), which
// go-zookeeper has no sentinels for and reports as "unknown error: N".
func transient(err error) bool {
	if err == nil {
		return false
	}
	return errors.Is(err, zk.ErrConnectionClosed) ||
		errors.Is(err, zk.ErrNoServer) ||
		errors.Is(err, zk.ErrSessionMoved) ||
		strings.HasSuffix(err.Error(), "unknown error: -4") ||
		strings.HasSuffix(err.Error(), "unknown error: -7")
}

// errStopped is returned by callUntil and retryUntil when their stop
// channel closes first.
var errStopped = errors.New("zklock: stopped")

// call runs f once, returning early if ctx ends or the session closes.
// go-zookeeper requests take no ctx; an abandoned request still completes
// (at the latest when the connection drops or closes), so the goroutine
// running it always ends.
func call[T any](ctx context.Context, c *Conn, f func() (T, error)) (T, error) {
	return callUntil(ctx, c, nil, f)
}

// callUntil is call that also returns errStopped once stop is closed (a nil
// stop never is).
func callUntil[T any](ctx context.Context, c *Conn, stop <-chan struct{}, f func() (T, error)) (T, error) {
	type result struct {
		v   T
		err error
	}
	ch := make(chan result, 1)
	go func() {
		v, err := f()
		ch <- result{v, err}
	}()
	var zero T
	select {
	case r := <-ch:
		if errors.Is(r.err, zk.ErrClosing) {
			return r.v, ErrClosed
		}
		return r.v, connLoss(r.err)
	case <-ctx.Done():
		return zero, ctx.Err()
	case <-stop:
		return zero, errStopped
	case <-c.done:
		return zero, ErrClosed
	}
}

// connLoss reports a request whose write to the socket failed as the
// connection loss it is. go-zookeeper hands that one request the raw network
// error (Conn.sendData: "write: broken pipe", "connection reset by peer", a
// write deadline) and closes the connection, while every other request in
// flight gets zk.ErrConnectionClosed. Unwrapped, such an error read as
// permanent: Lock returned it, and a background delete gave up, leaving its
// node behind while the session lived.
func connLoss(err error) error {
	var ne net.Error
	if err != nil && !errors.Is(err, zk.ErrConnectionClosed) && errors.As(err, &ne) {
		return fmt.Errorf("%w: %w", zk.ErrConnectionClosed, err)
	}
	return err
}

// retry runs f until it succeeds, fails with a non-transient error, or ctx
// ends, backing off between attempts by the session's retry policy. Only
// idempotent requests may be retried this way.
func retry[T any](ctx context.Context, c *Conn, f func() (T, error)) (T, error) {
	return retryUntil(ctx, c, nil, f)
}

// retryUntil is retry that also gives up with errStopped once stop is
// closed. The retry policy is built only when a first attempt failed
// transiently: the common request costs no policy and no clock read.
func retryUntil[T any](ctx context.Context, c *Conn, stop <-chan struct{}, f func() (T, error)) (T, error) {
	v, err := callUntil(ctx, c, stop, f)
	if !transient(err) {
		return v, err
	}
	b := backoff.WithContext(c.cfg.Backoff(), ctx)
wait:
	for transient(err) {
		d := b.NextBackOff()
		if d == backoff.Stop { // ctx ended, or the policy gave up
			break
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			v, err = callUntil(ctx, c, stop, f)
			continue
		case <-ctx.Done():
		case <-stop:
			err = errStopped
		case <-c.done:
			err = ErrClosed
		}
		t.Stop()
		break wait
	}
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = fmt.Errorf("%w (last error: %v)", ctx.Err(), err)
	}
	return v, err
}

// do is retry for requests with no result.
func (c *Conn) do(ctx context.Context, f func() error) error {
	_, err := retry(ctx, c, func() (struct{}, error) { return struct{}{}, f() })
	return err
}

func (c *Conn) children(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	type res struct {
		names []string
		stat  *zk.Stat
	}
	r, err := retry(ctx, c, func() (res, error) {
		names, st, err := c.zk.Children(path)
		return res{names, st}, err
	})
	return r.names, r.stat, wrapOp("list", path, err)
}

func (c *Conn) get(ctx context.Context, path string) ([]byte, *zk.Stat, error) {
	type res struct {
		data []byte
		stat *zk.Stat
	}
	r, err := retry(ctx, c, func() (res, error) {
		data, st, err := c.zk.Get(path)
		return res{data, st}, err
	})
	return r.data, r.stat, wrapOp("get", path, err)
}

// delete deletes path; a node that is already gone counts as deleted, since
// a retried delete may find its own earlier attempt applied. It gives up
// once stop is closed.
func (c *Conn) delete(ctx context.Context, path string, stop <-chan struct{}) error {
	_, err := retryUntil(ctx, c, stop, func() (struct{}, error) { return struct{}{}, c.zk.Delete(path, -1) })
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	return wrapOp("delete", path, err)
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

// createResult is the outcome of one create: the node's name and what the
// wire observer (or a stat) says of it.
type createResult struct {
	name string
	c    created
	err  error
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

// goDelete deletes an ephemeral node of session sid in the background until
// it is gone, the session that owned it is gone (its ephemerals went with
// it), or the Session closes. The returned channel is closed when it stops.
// c.mu may be held.
func (c *Conn) goDelete(path string, sid int64) <-chan struct{} {
	done := make(chan struct{})
	if !c.spawn(func() {
		defer close(done)
		for c.bg.Err() == nil {
			ep, err := c.awaitEpoch(c.bg)
			if err != nil || ep.sid != sid {
				return
			}
			if err := c.delete(c.bg, path, nil); err == nil || !transient(err) {
				return
			}
		}
	}) {
		close(done)
	}
	return done
}

func wrapOp(op, path string, err error) error {
	if err == nil || errors.Is(err, ErrClosed) || errors.Is(err, context.Canceled) ||
		errors.Is(err, context.DeadlineExceeded) {
		return err
	}
	return fmt.Errorf("zklock: %s %s: %w", op, path, err)
}

// Multi runs ops (go-zookeeper's *zk.CreateRequest, *zk.DeleteRequest,
// *zk.SetDataRequest, *zk.CheckVersionRequest) atomically: all or none. It
// is not retried on connection loss, since its outcome is then unknown.
// Combine it with a lock's Guard to write only while holding the lock.
func (c *Conn) Multi(ctx context.Context, ops ...any) ([]zk.MultiResponse, error) {
	return call(ctx, c, func() ([]zk.MultiResponse, error) { return c.zk.Multi(ops...) })
}
