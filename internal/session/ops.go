package session

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/zklock/zklock/internal/client"
)

// transient reports whether err may go away by retrying the same request:
// the connection was lost with the request in flight (it may or may not
// have been applied), the session moved to another server, the server gave
// up on the request (operation timeout), or it shed the request unperformed
// (throttled). A request made while disconnected is not failed: the client
// holds it for the next connection, within the caller's ctx.
func transient(err error) bool {
	return err != nil && (errors.Is(err, client.ErrConnectionLoss) ||
		errors.Is(err, client.ErrSessionMoved) ||
		errors.Is(err, client.ErrOperationTimeout) ||
		errors.Is(err, client.ErrThrottledOp))
}

// retryable reports whether retry may send a request again: a transient
// error, or the expiry of the session the request waited in. The client
// holds a request made while it is disconnected for the next connection,
// and fails it with ErrSessionExpired, unsent, when that connection finds
// the session expired; the new session may send it again. (Creates are
// never retried: the queue decides what a failed create means.)
func retryable(err error) bool {
	return transient(err) || errors.Is(err, client.ErrSessionExpired)
}

// errStopped is returned by callUntil and retryUntil when their epoch
// ends first.
var errStopped = errors.New("zklock: stopped")

// callUntil runs f once with ctx, or, if ep is not nil, with ctx carrying
// ep's Done as the client's stop channel (client.WithStop): the request
// is abandoned when ep ends, and callUntil returns errStopped. f must make
// one client request with the ctx it is given. The stop channel costs a
// context value; a context merged from ctx and the epoch's cost two
// callbacks registered and removed, one of them on the epoch's context,
// shared by every goroutine of the session (8% of the CPU in zklock's
// stacks in a 16x16 bench run, 2026-11-26, and a lock they queued on).
func callUntil[T any](ctx context.Context, ep *epoch, f func(context.Context) (T, error)) (T, error) {
	rctx := ctx
	if ep != nil {
		rctx = client.WithStop(ctx, ep.done)
	}
	v, err := f(rctx)
	switch {
	case err == nil:
		return v, nil
	case errors.Is(err, client.ErrClosed):
		return v, ErrClosed
	case errors.Is(err, client.ErrStopped):
		if ctx.Err() != nil {
			return v, ctx.Err()
		}
		return v, errStopped
	}
	return v, err
}

// retry runs f until it succeeds, fails with an error that is not
// retryable, or ctx ends, backing off between attempts by the session's
// retry policy. Only idempotent requests may be retried this way.
func retry[T any](ctx context.Context, c *Conn, f func(context.Context) (T, error)) (T, error) {
	return retryUntil(ctx, c, nil, f)
}

// retryUntil is retry that also gives up with errStopped once ep ends (a
// nil ep never does). The retry policy is built only when a first attempt
// failed transiently: the common request costs no policy and no clock
// read.
func retryUntil[T any](ctx context.Context, c *Conn, ep *epoch, f func(context.Context) (T, error)) (T, error) {
	v, err := callUntil(ctx, ep, f)
	if !retryable(err) {
		return v, err
	}
	var stop <-chan struct{}
	if ep != nil {
		stop = ep.ctx.Done()
	}
	b := backoff.WithContext(c.cfg.Backoff(), ctx)
wait:
	for retryable(err) {
		d := b.NextBackOff()
		if d == backoff.Stop { // ctx ended, or the policy gave up
			break
		}
		t := time.NewTimer(d)
		select {
		case <-t.C:
			v, err = callUntil(ctx, ep, f)
			continue
		case <-ctx.Done():
		case <-stop:
			err = errStopped
		case <-c.bg.Done():
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
func (c *Conn) do(ctx context.Context, f func(context.Context) error) error {
	_, err := retry(ctx, c, func(ctx context.Context) (struct{}, error) { return struct{}{}, f(ctx) })
	return err
}

// read is a node's data, children and Stat, as a read request returns them.
type read struct {
	data  []byte
	names []string
	stat  client.Stat
}

func (c *Conn) children(ctx context.Context, path string) ([]string, *client.Stat, error) {
	r, err := retry(ctx, c, func(ctx context.Context) (read, error) {
		names, st, err := c.cl.Children(ctx, path)
		return read{names: names, stat: st}, err
	})
	if err != nil {
		return nil, nil, wrapOp("list", path, err)
	}
	return r.names, &r.stat, nil
}

func (c *Conn) get(ctx context.Context, path string) ([]byte, *client.Stat, error) {
	r, err := retry(ctx, c, func(ctx context.Context) (read, error) {
		data, st, err := c.cl.Get(ctx, path)
		return read{data: data, stat: st}, err
	})
	if err != nil {
		return nil, nil, wrapOp("get", path, err)
	}
	return r.data, &r.stat, nil
}

// delete deletes path; a node that is already gone counts as deleted, since
// a retried delete may find its own earlier attempt applied. It gives up
// once ep ends (a nil ep never does).
func (c *Conn) delete(ctx context.Context, path string, ep *epoch) error {
	_, err := retryUntil(ctx, c, ep, func(ctx context.Context) (struct{}, error) {
		return struct{}{}, c.cl.Delete(ctx, path, -1)
	})
	if errors.Is(err, client.ErrNoNode) {
		return nil
	}
	return wrapOp("delete", path, err)
}

// wrapOp names the operation and path of a failure, unless the error does
// already (the client's errors name both) or is one the caller tests for
// as it is.
func wrapOp(op, path string, err error) error {
	if err == nil {
		return nil // before ze, which escapes to errors.As: no allocation per request
	}
	var ze *client.Error
	if errors.Is(err, ErrClosed) || errors.Is(err, errStopped) ||
		errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) || errors.As(err, &ze) {
		return err
	}
	return fmt.Errorf("zklock: %s %s: %w", op, path, err)
}

// Multi runs ops atomically: all or none. It is not retried on connection
// loss, since its outcome is then unknown. Combine it with a lock's Guard
// (a check op) to write only while holding the lock.
func (c *Conn) Multi(ctx context.Context, ops ...client.Op) ([]client.OpResult, error) {
	return callUntil(ctx, nil, func(ctx context.Context) ([]client.OpResult, error) { return c.cl.Multi(ctx, ops...) })
}
