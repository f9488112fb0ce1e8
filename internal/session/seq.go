package session

import (
	"context"
	"errors"

	"github.com/zklock/zklock/internal/client"
)

// This file is what the sequence layout (queue.Seq) asks of the session
// beyond the other layouts: a create that learns how many children its
// parent has, and a pipeline of exists requests, the two ways it finds
// the node ahead of its own without listing the queue.

// CreateAndStat is CreateAndList with an exists request for the parent in
// place of its listing: ZooKeeper answers a session's requests in order,
// so the parent's stat reflects the create at no extra round trip, and
// its NumChildren counts every node ahead of ours that still exists.
// children is -1 when the stat failed or was not waited for; the caller
// then looks another way.
func (c *Conn) CreateAndStat(ctx context.Context, parents []string, path string, data []byte) (string, int64, int64, int32, int64, error) {
	r, parent, err := c.createThen(ctx, parents, path, data, c.cl.GoExists)
	if err != nil {
		return "", 0, 0, -1, 0, err
	}
	select {
	case <-parent.Done():
		if parent.Err != nil {
			return r.name, r.czxid, r.sid, -1, 0, nil
		}
		c.dirs.refreshCzxid(parentOf(path), parent.Stat.Czxid)
		return r.name, r.czxid, r.sid, parent.Stat.NumChildren, parent.Stat.Czxid, nil
	case <-ctx.Done():
		return r.name, r.czxid, r.sid, -1, 0, nil
	}
}

// Exist reports for each of paths whether its node exists. The exists
// requests (without watches: a watch on a node that never comes would stay
// on the server for the session's life) are sent as one pipeline, one
// round trip for all; a transient error sends them all again, within ctx.
func (c *Conn) Exist(ctx context.Context, paths []string) ([]bool, error) {
	out, err := retry(ctx, c, func(ctx context.Context) ([]bool, error) {
		calls := make([]*client.Call, len(paths))
		for i, p := range paths {
			calls[i] = c.cl.GoExists(p)
		}
		out := make([]bool, len(paths))
		var first error
		for i, k := range calls {
			select {
			case <-k.Done(): // a Call always completes: reply, loss, expiry or close
			case <-ctx.Done():
				return nil, ctx.Err()
			}
			switch {
			case k.Err == nil:
				out[i] = true
			case errors.Is(k.Err, client.ErrNoNode):
			case first == nil:
				first = k.Err
			}
		}
		return out, first
	})
	if err != nil {
		return nil, wrapOp("exists", paths[0], err)
	}
	return out, nil
}
