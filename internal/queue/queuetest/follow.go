package queuetest

import (
	"context"
	"slices"

	"github.com/zklock/zklock/internal/queue"
)

// OpAddWatch counts the persistent recursive watches a Persistent Conn
// sets: one per session and directory (counted only: it takes no fault).
const OpAddWatch Op = "addWatch"

// Persistent is a Conn that follows nodes through persistent watches
// (queue.Follower), as the real Conn does against ZooKeeper 3.6 and later.
// A plain Conn has no Follow: Permits then uses one-shot watches.
type Persistent struct {
	*Conn
}

var _ queue.Follower = Persistent{}

// Persistent returns c with Follow.
func (c *Conn) Persistent() Persistent { return Persistent{c} }

// follow is one Follow's view of its node: what changed since its next
// returned, guarded by the Server's lock.
type follow struct {
	announces, deleted, written bool
	note                        chan struct{} // capacity 1
}

// Follow reads p and follows it, as the real Conn's does: the first Follow
// in dir of a session counts an OpAddWatch, each one OpWatch (its read),
// whose faults it takes (Lost: the follow is never told of a change). Its
// next counts as blocked on OpWatch while it waits, and returns LookAgain
// when the epoch it began in ends.
func (c Persistent) Follow(ctx context.Context, dir, p string) ([]byte, bool, func(context.Context) (queue.Change, error), func(), error) {
	f, err := c.begin(ctx, OpWatch, p)
	if err != nil {
		return nil, false, nil, nil, err
	}
	if f.Err != nil {
		return nil, false, nil, nil, f.Err
	}
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return nil, false, nil, nil, err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := (Watch{c.sid, dir}); !slices.Contains(s.trees, k) {
		s.trees = append(s.trees, k)
		s.calls[OpAddWatch]++
	}
	n := s.nodes[p]
	if n == nil {
		return nil, false, nil, nil, nil
	}
	fw := &follow{announces: queue.Announces(n.data), note: make(chan struct{}, 1)}
	if !f.Lost {
		s.follows[p] = append(s.follows[p], fw)
	}
	stop := func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		if s.follows[p] = slices.DeleteFunc(s.follows[p], func(x *follow) bool { return x == fw }); len(s.follows[p]) == 0 {
			delete(s.follows, p)
		}
	}
	return slices.Clone(n.data), true, func(ctx context.Context) (queue.Change, error) { return c.next(ctx, fw, ep) }, stop, nil
}

func (c Persistent) next(ctx context.Context, fw *follow, ep *epoch) (queue.Change, error) {
	c.block(OpWatch, +1)
	defer c.block(OpWatch, -1)
	for {
		c.s.mu.Lock()
		deleted, written := fw.deleted, fw.written
		fw.written = false
		c.s.mu.Unlock()
		switch {
		case deleted:
			return queue.Deleted, nil
		case written && fw.announces:
			return queue.Released, nil
		case written:
			return queue.LookAgain, nil
		}
		select {
		case <-fw.note:
		case <-ep.done:
			return queue.LookAgain, nil
		case <-ctx.Done():
			return queue.LookAgain, ctx.Err()
		}
	}
}

// fireFollowsLocked tells p's follows of a change: Deleted or Released
// (its data was written).
func (s *Server) fireFollowsLocked(p string, what queue.Change) {
	for _, fw := range s.follows[p] {
		if what == queue.Deleted {
			fw.deleted = true
		} else {
			fw.written = true
		}
		select {
		case fw.note <- struct{}{}:
		default:
		}
	}
}
