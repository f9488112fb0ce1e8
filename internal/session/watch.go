package session

import (
	"context"
	"errors"

	"github.com/go-zookeeper/zk"
)

// watch is one outstanding data watch on a node, shared by every waiter on
// that node. go-zookeeper cannot remove a watch, so a waiter that gives up
// leaves its watch behind until the node changes; sharing one watch per
// path keeps those from piling up when waiters come and go.
type watch struct {
	fired chan struct{} // closed when the node changed, was deleted, or the watch was invalidated
}

// waitChange blocks until the node at path is deleted or changed, ctx
// ends, or stop is closed (then it returns errStopped). It returns nil at
// once if the node does not exist. A data watch (getData) is used rather
// than exists, as Curator does, so that no watch is left on a node that is
// already gone.
func (c *Conn) waitChange(ctx context.Context, path string, stop <-chan struct{}) error {
	w, err := c.watch(ctx, path, stop)
	if err != nil || w == nil {
		return err
	}
	select {
	case <-w.fired:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-stop:
		return errStopped
	case <-c.done:
		return ErrClosed
	}
}

func (c *Conn) watch(ctx context.Context, path string, stop <-chan struct{}) (*watch, error) {
	c.mu.Lock()
	w := c.watches[path]
	c.mu.Unlock()
	if w != nil {
		return w, nil
	}
	ch, err := retryUntil(ctx, c, stop, func() (<-chan zk.Event, error) {
		_, _, ch, err := c.zk.GetW(path)
		return ch, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapOp("watch", path, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if w := c.watches[path]; w != nil {
		// Another waiter registered first. go-zookeeper fires both channels on
		// one server event (the server keeps one watch per path and
		// connection), so ours ends with it; only one entry is kept here.
		go drain(ch)
		return w, nil
	}
	w = &watch{fired: make(chan struct{})}
	c.watches[path] = w
	go func() {
		<-ch // fires on change, deletion, expiry or close
		c.mu.Lock()
		if c.watches[path] == w {
			delete(c.watches, path)
		}
		c.mu.Unlock()
		close(w.fired)
	}()
	return w, nil
}

func drain(ch <-chan zk.Event) { <-ch }
