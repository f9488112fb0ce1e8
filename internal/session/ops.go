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
