package session

import (
	"context"
	"errors"
	"slices"

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
	return queue.Epoch{SessionID: ep.sid, Done: ep.done, Key: ep, Check: c.CheckDeadline}, nil
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

func (c *Conn) WaitData(ctx context.Context, path string, version int32) (queue.Change, error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return queue.LookAgain, err
	}
	ch, err := c.waitData(ctx, path, version, ep.done)
	if errors.Is(err, errStopped) {
		return queue.LookAgain, nil
	}
	return ch, err
}

func (c *Conn) ReadWatch(ctx context.Context, path string) ([]byte, bool, func(context.Context) (queue.Change, error), error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return nil, false, nil, err
	}
	data, ok, wait, err := c.readWatch(ctx, path, ep.done)
	if errors.Is(err, errStopped) {
		// The epoch ended: nothing read counts; the wait says look again.
		return nil, true, func(context.Context) (queue.Change, error) { return queue.LookAgain, nil }, nil
	}
	if err != nil || !ok {
		return nil, ok, nil, err
	}
	return data, true, func(ctx context.Context) (queue.Change, error) {
		ch, err := wait(ctx)
		if errors.Is(err, errStopped) {
			return queue.LookAgain, nil
		}
		return ch, err
	}, nil
}

func (c *Conn) Track(ep queue.Epoch, path string) bool {
	return c.track(ep.Key.(*epoch), path)
}

func (c *Conn) Untrack(ep queue.Epoch, path string) { c.untrack(ep.Key.(*epoch), path) }

func (c *Conn) ChildrenStat(ctx context.Context, path string) ([]string, *zk.Stat, error) {
	return c.children(ctx, path)
}

// ChildrenW lists path's children and sets a child watch. The channel
// receives one event when the children change or path is deleted, or when
// the session's state changes (the watch may not survive that: go-zookeeper
// restores watches after a reconnect from a goroutine and only logs a
// failure, issue #83), or the Conn closes; the caller lists again. The
// event comes from the session's event callback, not from go-zookeeper's
// per-watch channel, so the state change can be folded in without a
// goroutine.
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, *zk.Stat, <-chan zk.Event, error) {
	ch := make(chan zk.Event, 1)
	c.mu.Lock()
	c.childWaiters[path] = append(c.childWaiters[path], ch)
	c.mu.Unlock()
	type res struct {
		names []string
		stat  *zk.Stat
	}
	r, err := retry(ctx, c, func() (res, error) {
		names, st, _, err := c.zk.ChildrenW(path)
		return res{names, st}, err
	})
	if err != nil {
		c.mu.Lock()
		c.childWaiters[path] = slices.DeleteFunc(c.childWaiters[path], func(x chan zk.Event) bool { return x == ch })
		if len(c.childWaiters[path]) == 0 {
			delete(c.childWaiters, path)
		}
		c.mu.Unlock()
		return nil, nil, nil, wrapOp("list", path, err)
	}
	return r.names, r.stat, ch, nil
}

// fireChildrenLocked delivers ev to the child waiters of path, or of every
// path when path is "", and forgets them. c.mu must be held.
func (c *Conn) fireChildrenLocked(path string, ev zk.Event) {
	for p, chs := range c.childWaiters {
		if path != "" && p != path {
			continue
		}
		for _, ch := range chs {
			select {
			case ch <- ev:
			default:
			}
		}
		delete(c.childWaiters, p)
	}
}

// WaitExists blocks until path exists (nil at once if it does), ctx ends, or
// the Conn closes.
func (c *Conn) WaitExists(ctx context.Context, path string) error {
	c.mu.Lock()
	changed := c.changed // a state change wakes us: see ChildrenW
	c.mu.Unlock()
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
	case <-changed:
		return nil // the caller looks again
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
