package session

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"

	"github.com/zklock/zklock/internal/client"
)

// Epoch waits for a live epoch and returns it.
func (c *Conn) Epoch(ctx context.Context) (Epoch, error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return Epoch{}, err
	}
	return Epoch{&ep.pub}, nil
}

func (c *Conn) Children(ctx context.Context, path string) ([]string, error) {
	names, _, err := c.children(ctx, path)
	return names, err
}

func (c *Conn) Stat(ctx context.Context, path string) (*client.Stat, error) {
	_, st, err := c.get(ctx, path)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	return st, err
}

func (c *Conn) Get(ctx context.Context, path string) ([]byte, *client.Stat, error) {
	return c.get(ctx, path)
}

func (c *Conn) Delete(ctx context.Context, path string) error { return c.delete(ctx, path, nil) }

// DeleteUntil is Delete that also gives up once ep ends.
func (c *Conn) DeleteUntil(ctx context.Context, path string, ep Epoch) error {
	return c.delete(ctx, path, ep.Key.(*epoch))
}

// ReleaseUntil is DeleteUntil with the release announced (see
// Released): one multi sets the node's data, which fires a data
// watch with NodeDataChanged, and deletes the node. Retried after a
// connection loss it finds the node gone (the first attempt applied, or
// the session took it): deleted.
func (c *Conn) ReleaseUntil(ctx context.Context, path string, ep Epoch) error {
	if err := c.ReleaseOwnUntil(ctx, path, ep); !errors.Is(err, client.ErrNoNode) {
		return err
	}
	return nil
}

// ReleaseOwnUntil is ReleaseUntil for a node no other can have been
// named like since it was created (queue.Seq): a node missing at the
// first attempt was deleted by someone else, ErrNoNode; missing at a
// retry after a connection loss, the attempt cut off may have applied:
// deleted.
func (c *Conn) ReleaseOwnUntil(ctx context.Context, path string, ep Epoch) error {
	var tries atomic.Int32
	_, err := retryUntil(ctx, c, ep.Key.(*epoch), func(ctx context.Context) ([]client.OpResult, error) {
		tries.Add(1)
		return c.cl.Multi(ctx, client.SetOp(path, nil, -1), client.DeleteOp(path, -1))
	})
	if errors.Is(err, client.ErrNoNode) && tries.Load() > 1 {
		return nil
	}
	return wrapOp("release", path, err)
}

// WaitChange also returns LookAgain when the current ownership epoch ends,
// so that the queue looks again under the next one. A watch cannot be
// trusted across a session expiry: a watch request queued while
// disconnected may be sent afterwards, under the new session, and then
// fires only when the predecessor changes, leaving a waiter whose node
// expired asleep instead of re-enqueueing.
func (c *Conn) WaitChange(ctx context.Context, path string) (Change, error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return LookAgain, err
	}
	ch, err := c.waitChange(ctx, path, ep)
	if errors.Is(err, errStopped) {
		return LookAgain, nil // the epoch ended
	}
	return ch, err
}

func (c *Conn) WaitData(ctx context.Context, path string, version int32) (Change, error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return LookAgain, err
	}
	ch, err := c.waitData(ctx, path, version, ep)
	if errors.Is(err, errStopped) {
		return LookAgain, nil
	}
	return ch, err
}

func (c *Conn) ReadWatch(ctx context.Context, path string) ([]byte, bool, func(context.Context) (Change, error), error) {
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return nil, false, nil, err
	}
	data, ok, wait, err := c.readWatch(ctx, path, ep)
	if errors.Is(err, errStopped) {
		// The epoch ended: nothing read counts; the wait says look again.
		return nil, true, func(context.Context) (Change, error) { return LookAgain, nil }, nil
	}
	if err != nil || !ok {
		return nil, ok, nil, err
	}
	return data, true, func(ctx context.Context) (Change, error) {
		ch, err := wait(ctx)
		if errors.Is(err, errStopped) {
			return LookAgain, nil
		}
		return ch, err
	}, nil
}

func (c *Conn) Track(ep Epoch, t *Tracked) bool {
	return c.track(ep.Key.(*epoch), t)
}

func (c *Conn) Untrack(ep Epoch, t *Tracked) { c.untrack(ep.Key.(*epoch), t) }

func (c *Conn) ChildrenStat(ctx context.Context, path string) ([]string, *client.Stat, error) {
	return c.children(ctx, path)
}

// ChildrenW lists path's children and sets a child watch. The channel
// receives one event when the children change or path is deleted, or when
// the session's state changes (a watch restored after a reconnect is not
// trusted alone), or the Conn closes; the caller lists again. The event
// comes from the client's OnWatch hook, so the state change is folded in
// without a goroutine.
func (c *Conn) ChildrenW(ctx context.Context, path string) ([]string, *client.Stat, <-chan client.Event, error) {
	ch := make(chan client.Event, 1)
	c.mu.Lock()
	c.childWaiters[path] = append(c.childWaiters[path], ch)
	c.mu.Unlock()
	r, err := retry(ctx, c, func(ctx context.Context) (read, error) {
		names, st, w, err := c.cl.ChildrenW(ctx, path)
		if w != nil {
			c.mu.Lock()
			c.childWatches[path] = append(c.childWatches[path], w)
			c.mu.Unlock()
		}
		return read{names: names, stat: st}, err
	})
	if err != nil {
		c.mu.Lock()
		c.childWaiters[path] = slices.DeleteFunc(c.childWaiters[path], func(x chan client.Event) bool { return x == ch })
		if len(c.childWaiters[path]) == 0 {
			delete(c.childWaiters, path)
		}
		c.mu.Unlock()
		return nil, nil, nil, wrapOp("list", path, err)
	}
	return r.names, &r.stat, ch, nil
}

// StopChildren forgets ch, a ChildrenW's event channel nobody will wait
// for; once no caller waits on path, the client's watches of path are
// removed, and with the last of them the server's (Watch.Remove), on a
// goroutine Close waits for.
func (c *Conn) StopChildren(path string, ch <-chan client.Event) {
	c.mu.Lock()
	n := len(c.childWaiters[path])
	c.childWaiters[path] = slices.DeleteFunc(c.childWaiters[path], func(x chan client.Event) bool { return x == ch })
	if len(c.childWaiters[path]) == n || len(c.childWaiters[path]) > 0 {
		// ch fired already (its watch with it), or others wait on path.
		c.mu.Unlock()
		return
	}
	delete(c.childWaiters, path)
	ws := c.childWatches[path]
	delete(c.childWatches, path)
	c.mu.Unlock()
	if len(ws) == 0 {
		return
	}
	c.Go(func(ctx context.Context) {
		for _, w := range ws {
			_ = w.Remove(ctx) // a failure leaves a watch that fires into nothing
		}
	})
}

// fireChildrenLocked delivers ev to the child waiters of path, or of every
// path when path is "", and forgets them. c.mu must be held.
func (c *Conn) fireChildrenLocked(path string, ev client.Event) {
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
	if path != "" {
		// The server's watch fired: the client ended its watches of path.
		// (A state change leaves them to be restored, or removed by a
		// later StopChildren.)
		delete(c.childWatches, path)
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
		w  *client.Watch
	}
	p, err := retry(ctx, c, func(ctx context.Context) (probe, error) {
		_, ok, w, err := c.cl.ExistsW(ctx, path)
		return probe{ok, w}, err
	})
	if err != nil {
		return wrapOp("watch", path, err)
	}
	if p.ok {
		return nil
	}
	// A watch left behind when ctx ends stays with the client until it
	// fires or the session ends: its one event is queued on it, unread.
	select {
	case <-p.w.Ready():
		return nil
	case <-changed:
		return nil // the caller looks again
	case <-ctx.Done():
		return ctx.Err()
	case <-c.bg.Done():
		return ErrClosed
	}
}

// SetData sets path's data if its version is version (-1: any), retrying
// transient errors (a retried set whose first attempt was applied fails with
// client.ErrBadVersion, as a concurrent writer's would).
func (c *Conn) SetData(ctx context.Context, path string, data []byte, version int32) error {
	return wrapOp("set", path, c.do(ctx, func(ctx context.Context) error {
		_, err := c.cl.Set(ctx, path, data, version)
		return err
	}))
}
