package zklock

import (
	"bytes"
	"context"
	"errors"
	"path"
	"time"
)

// observeRetry is how long Observe waits after an error that retrying the
// request did not cure (an ACL refusal, say) before it looks again.
const observeRetry = time.Second

// Observe returns a channel that receives the current leader at once and
// then each change of leader (or of its value), in order of their terms.
// The zero LeaderInfo (Node == "") reports that there is no leader. The
// latest state is never dropped: a slow reader skips intermediate states and
// receives the newest one, never a stale backlog. (Leaders that come and go
// within one round trip to the server can be missed by any reader, as the
// server reports that something changed, not each change.) The channel is
// closed when ctx ends or the session is closed.
//
// Observe waits on one ZooKeeper watch at a time: on the leader's node
// while there is a leader (so it wakes only when the leader changes, not for
// every candidate that queues), and on the election path while there is
// none. When ctx ends, Observe does not remove the watch it set (zklock's
// client could: a Session shares one watch per node among its waiters):
// it stays on the server until the node changes or the session ends.
func (e *Election) Observe(ctx context.Context) (<-chan LeaderInfo, error) {
	if e.unmade() {
		return nil, unmade("Election", "NewElection")
	}
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	box := newLatest[LeaderInfo]()
	out := make(chan LeaderInfo)
	go e.observe(ctx, box)
	go box.deliver(ctx, out)
	return out, nil
}

// observe reads the leader, publishes it when it changed, and waits for the
// next change, until ctx ends or the session is closed.
func (e *Election) observe(ctx context.Context, box *latest[LeaderInfo]) {
	defer box.close()
	var last LeaderInfo
	for first := true; ctx.Err() == nil; {
		info, err := e.leader(ctx)
		if err == nil {
			if first || !sameLeader(info, last) {
				box.put(info)
			}
			first, last = false, info
			err = e.awaitChange(ctx, info)
		}
		switch {
		case err == nil || ctx.Err() != nil:
		case errors.Is(err, ErrSessionClosed):
			return
		default:
			e.s.opts.logger.Warn("zklock: observing election", "path", e.q.Dir, "err", err)
			sleep(ctx, observeRetry)
		}
	}
}

func sameLeader(a, b LeaderInfo) bool {
	return a.Node == b.Node && bytes.Equal(a.Value, b.Value)
}

// awaitChange waits until info may no longer describe the leader (see
// queue.AwaitFirstChange); the session's Close ends the wait too.
func (e *Election) awaitChange(ctx context.Context, info LeaderInfo) error {
	first := ""
	if info.Node != "" {
		first = path.Base(info.Node)
	}
	return e.q.AwaitFirstChange(ctx, first)
}
