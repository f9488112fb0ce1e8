package queue

import (
	"context"
	"errors"
	"fmt"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// SeqLen is the length of ZooKeeper's sequence suffix (%010d).
const SeqLen = 10

// Join grants us, at once, a node of q.Kind at the position of at, a node we
// hold in the same queue. The node is a non-sequential EPHEMERAL one named
// with a fresh protected prefix, q.Kind and at's 10-character sequence
// suffix, so every client orders it beside at (Sort puts a writer first on a
// tie). This is Curator 5.5's write-to-read downgrade (CURATOR-621): nothing
// can come between, because at still exists while we create, and nodes
// created later get higher sequence numbers. Its data is tagged as q's
// nodes are (a revocable reader's: RevocableTag).
//
// That at still exists is checked, not assumed: after our node exists, at
// is read once more (a second round trip). Another client may have
// deleted at (an operator's Break), and a writer queued behind it may hold
// since: our node, numbered ahead of that writer, would let a reader in
// beside it. A node ZooKeeper deleted never comes back under its name, so
// at found after our create was there when ours was made.
//
// It returns errs.ErrLockLost if at's epoch ends first or at is gone, and removes
// the node on every failure.
func (q *Queue) Join(ctx context.Context, at *Held, data []byte) (*Held, error) {
	name := NewProtectedPrefix() + q.Kind + at.Path[len(at.Path)-SeqLen:]
	path := q.Dir + "/" + name
	h, err := q.join(ctx, at, path, q.nodeData(data))
	if err == nil {
		err = q.beside(ctx, at)
	}
	if err != nil {
		if h != nil {
			q.Conn.Untrack(h.Epoch, &h.Tracked)
		}
		// The exact name is known, so a create whose reply we gave up on is
		// removed by name; ZooKeeper applies a session's requests in order, so
		// this delete cannot overtake it.
		q.Conn.Discard(path, at.Epoch.SessionID)
		return nil, err
	}
	return h, nil
}

// beside confirms that at's node exists, once ours does.
func (q *Queue) beside(ctx context.Context, at *Held) error {
	st, err := q.Conn.Stat(ctx, at.Path)
	switch {
	case err != nil:
		return err
	case st == nil:
		return errs.ErrLockLost
	}
	return nil
}

func (q *Queue) join(ctx context.Context, at *Held, path string, data []byte) (*Held, error) {
	for i := 0; i < maxCreates; i++ {
		select {
		case <-at.Epoch.Done:
			return nil, errs.ErrLockLost
		default:
		}
		czxid, owner, err := q.Conn.CreateEphemeral(ctx, path, data)
		switch {
		case err == nil:
			return q.joined(at, path, czxid, owner)
		case errors.Is(err, client.ErrNodeExists),
			errors.Is(err, client.ErrConnectionLoss), errors.Is(err, client.ErrSessionMoved):
			// A create cut off by connection loss may have been applied: the
			// name is unique, so a node there is that create's (Stat retries
			// until the connection is back).
			st, err := q.Conn.Stat(ctx, path)
			if err != nil {
				return nil, err
			}
			if st != nil {
				return q.joined(at, path, st.Czxid, st.EphemeralOwner)
			}
		case errors.Is(err, client.ErrSessionExpired):
			if _, err := q.Conn.Epoch(ctx); err != nil {
				return nil, err
			}
		default:
			return nil, err
		}
	}
	return nil, fmt.Errorf("queue: create %s: gave up after %d attempts", path, maxCreates)
}

// joined accepts the node only if it belongs to at's session and epoch.
func (q *Queue) joined(at *Held, path string, czxid, owner int64) (*Held, error) {
	h := &Held{Tracked: Tracked{Path: path}, Token: czxid, Epoch: at.Epoch}
	if owner != at.Epoch.SessionID || !q.Conn.Track(at.Epoch, &h.Tracked) {
		q.Conn.Discard(path, owner) // a later session's node must not linger
		return nil, errs.ErrLockLost
	}
	return h, nil
}
