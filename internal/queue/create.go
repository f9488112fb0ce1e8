package queue

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// node is our node in the queue.
type node struct {
	path  string
	name  string
	czxid int64
	owner int64 // session id that owns the node
	// listing is the parent's children as of just after the create, or nil.
	listing []string
}

// maxCreates bounds create attempts within one Acquire: each is a parent
// reaped under us or a create cut off by connection loss.
const maxCreates = 16

// create makes our node with Curator's protected name, creating CONTAINER
// parents as needed (retrying when the server reaps a parent between our
// create and its use). When a create is cut off by connection loss its
// outcome is unknown: we look for our node by its unique prefix and adopt it
// only if the current session owns it; a node of an earlier session is
// deleted, never adopted.
//
// With list, the parent's listing is pipelined behind the create (see
// Conn.CreateAndList) and kept in the node for the first look at the queue;
// callers that list something else next pass false, not to pay for it.
func (q *Queue) create(ctx context.Context, data []byte, list bool) (node, error) {
	data = q.nodeData(data)
	prefix := NewProtectedPrefix()
	path := q.Dir + "/" + prefix + q.Kind
	var err error
	var parents []string // the lock path and its parents, for CreateAndList
	if list {
		parents = append(Parents(q.Dir), q.Dir)
	}
	for i := 0; i < maxCreates; i++ {
		var p string
		var czxid, owner int64
		var names []string
		if list {
			p, czxid, owner, names, _, err = q.Conn.CreateAndList(ctx, parents, path, data)
		} else {
			p, czxid, owner, err = q.Conn.CreateSeq(ctx, path, data)
		}
		switch {
		case err == nil:
			return node{path: p, name: p[len(q.Dir)+1:], czxid: czxid, owner: owner, listing: names}, nil
		case errors.Is(err, client.ErrNoNode) && list:
			// A parent the Conn took for existing was reaped: the next
			// turn creates them, pipelined ahead of the create.
		case errors.Is(err, client.ErrNoNode):
			// ensureParents fails with NoNode too when a parent it found is
			// reaped before it creates the next one: the next turn creates
			// that parent again.
			if err := q.ensureParents(ctx); err != nil && !errors.Is(err, client.ErrNoNode) {
				return node{}, err
			}
		case errors.Is(err, client.ErrConnectionLoss) || errors.Is(err, client.ErrSessionMoved):
			n, ok, err := q.recover(ctx, prefix, true)
			if err != nil {
				q.abandon(prefix)
				return node{}, err
			}
			if ok {
				return n, nil
			}
		case errors.Is(err, client.ErrSessionExpired):
			// The create was not applied (it waited for a connection and
			// the session expired); retry once a session is established.
			if _, err := q.Conn.Epoch(ctx); err != nil {
				return node{}, err
			}
		default:
			return node{}, err
		}
	}
	return node{}, fmt.Errorf("queue: create under %s: gave up after %d attempts: %w", q.Dir, maxCreates, err)
}

func (q *Queue) ensureParents(ctx context.Context) error {
	for _, p := range append(Parents(q.Dir), q.Dir) {
		if err := q.Conn.CreateContainer(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// recover finds the node a cut-off create may have made. Without adopt,
// or when the node is not of the current session, it discards the node.
func (q *Queue) recover(ctx context.Context, prefix string, adopt bool) (node, bool, error) {
	return q.recoverBy(ctx, adopt, func(ctx context.Context, p, name string) (*client.Stat, error) {
		if !strings.HasPrefix(name, prefix) {
			return nil, nil
		}
		return q.Conn.Stat(ctx, p)
	})
}

// recoverBy lists the queue and asks mine of each child whether a cut-off
// create of ours made it (its Stat), or not (nil: not ours, or gone). With
// adopt, the first of the current session is returned; every other is
// discarded.
func (q *Queue) recoverBy(ctx context.Context, adopt bool, mine func(ctx context.Context, p, name string) (*client.Stat, error)) (node, bool, error) {
	ep, err := q.Conn.Epoch(ctx)
	if err != nil {
		return node{}, false, err
	}
	names, err := q.Conn.Children(ctx, q.Dir)
	if errors.Is(err, client.ErrNoNode) {
		return node{}, false, nil
	}
	if err != nil {
		return node{}, false, err
	}
	var found node
	ok := false
	for _, name := range names {
		p := q.Dir + "/" + name
		st, err := mine(ctx, p, name)
		switch {
		case err != nil:
			return node{}, false, err
		case st == nil:
		case adopt && st.EphemeralOwner == ep.SessionID && !ok:
			found, ok = node{path: p, name: name, czxid: st.Czxid, owner: st.EphemeralOwner}, true
		default:
			q.Conn.Discard(p, st.EphemeralOwner)
		}
	}
	return found, ok, nil
}

// abandon resolves in the background a cut-off create that recover could
// not (ctx ended, say, while the connection was down): a node it made
// would otherwise stay in the queue, blocking every contender behind it,
// for as long as the session lives. It looks once a live epoch is back, on
// a goroutine the session's Close waits for and stops.
func (q *Queue) abandon(prefix string) {
	q.Conn.Go(func(bg context.Context) { _, _, _ = q.recover(bg, prefix, false) })
}

// locked is the *errs.LockedError of a Try acquisition that would have to
// wait, naming the node that blocks it: the first contender in the queue,
// or, when that one does not block us (a reader holding, ahead of a
// reader behind a queued writer), the nearest one ahead that does, which
// waits too (Queued). Its data and session are read if they still can be.
func (q *Queue) locked(ctx context.Context, sc Scanned, blocks Blocks) error {
	holder, queued := sc.First, false
	if blocks != nil && !blocks(sc.First) {
		holder, queued = sc.Blocker, true
	}
	e := &errs.LockedError{Holder: holder.Name, Queued: queued}
	if data, st, err := q.Conn.Get(ctx, q.Dir+"/"+holder.Name); err == nil {
		e.Data, e.Session = UserData(data), st.EphemeralOwner
	}
	return e
}

// nodeData is the data our node is created with.
func (q *Queue) nodeData(data []byte) []byte {
	var tag string
	switch {
	case q.Revocable:
		tag = RevocableTag
	case q.Handoff && !q.Quiet && exclusive(q.Kind):
		tag = Announcer
	default:
		return data
	}
	return append(append(make([]byte, 0, len(data)+len(tag)), data...), tag...)
}
