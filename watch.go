package zklock

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

// waitChange blocks until the node at path is deleted or changed, or ctx
// ends. It returns nil at once if the node does not exist. A data watch
// (getData) is used rather than exists, as Curator does, so that no watch
// is left on a node that is already gone.
func (s *Session) waitChange(ctx context.Context, path string) error {
	w, err := s.watch(ctx, path)
	if err != nil || w == nil {
		return err
	}
	select {
	case <-w.fired:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	case <-s.done:
		return ErrSessionClosed
	}
}

func (s *Session) watch(ctx context.Context, path string) (*watch, error) {
	s.mu.Lock()
	w := s.watches[path]
	s.mu.Unlock()
	if w != nil {
		return w, nil
	}
	ch, err := retry(ctx, s, func() (<-chan zk.Event, error) {
		_, _, ch, err := s.conn.GetW(path)
		return ch, err
	})
	if errors.Is(err, zk.ErrNoNode) {
		return nil, nil
	}
	if err != nil {
		return nil, wrapOp("watch", path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if w := s.watches[path]; w != nil {
		// Another waiter registered first. go-zookeeper fires both channels on
		// one server event (the server keeps one watch per path and
		// connection), so ours ends with it; only one entry is kept here.
		go drain(ch)
		return w, nil
	}
	w = &watch{fired: make(chan struct{})}
	s.watches[path] = w
	go func() {
		<-ch // fires on change, deletion, expiry or close
		s.mu.Lock()
		if s.watches[path] == w {
			delete(s.watches, path)
		}
		s.mu.Unlock()
		close(w.fired)
	}()
	return w, nil
}

func drain(ch <-chan zk.Event) { <-ch }
