package client

import (
	"context"
	"errors"
)

// AddWatch sets a persistent watch on path (ZooKeeper 3.6 and later;
// older servers refuse it with ErrUnimplemented): WatchPersistent, or with
// recursive WatchPersistentRecursive. The node need not exist. The watch
// fires on every change until it is removed (Watch.Remove), the session
// expires or the client closes. After a reconnect of the same session the
// server sets it again, but does not replay the changes it missed while
// disconnected: a caller that needs them reads again after StateConnected.
func (c *Client) AddWatch(ctx context.Context, path string, recursive bool) (*Watch, error) {
	kind, mode := WatchPersistent, int32(0)
	if recursive {
		kind, mode = WatchPersistentRecursive, 1
	}
	r := newRequest(opAddWatch, path)
	r.flags = mode
	r.watch = newWatch(c, path, kind)
	if err := c.call(ctx, r); err != nil {
		return nil, err
	}
	w, err := r.watch, r.failure()
	release(r)
	if err != nil {
		return nil, err
	}
	return w, nil
}

// removeWatches asks the server to remove the session's watches of type
// typ on path. That the server has none (the watch fired meanwhile) or
// lost them with the connection is success.
func (c *Client) removeWatches(ctx context.Context, path string, typ int32) error {
	r := newRequest(opRemoveWatches, path)
	r.flags = typ
	if err := c.call(ctx, r); err != nil {
		return err
	}
	err := r.failure()
	release(r)
	if errors.Is(err, ErrNoWatcher) || errors.Is(err, ErrConnectionLoss) {
		return nil
	}
	return err
}
