package queue

import (
	"cmp"
	"context"
	"errors"
	"slices"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/session"
)

// Tracker is a Conn that can report every deletion under a directory
// through the session's persistent recursive watch on it
// (session.Conn.TrackDir, where every server runs ZooKeeper 3.9 or later:
// before 3.9 a server keeps one watch mode per session and path,
// ZOOKEEPER-4466). Permits uses it when
// the Conn has it and the server takes persistent watches (see Permits).
type Tracker interface {
	// TrackDir subscribes to the deletions of dir's children, under
	// session sid: a listing of dir made after it returns is followed by
	// every later deletion. next returns the names deleted since it last
	// returned, or look when some may have been missed (a disconnection,
	// the watch's end, the epoch's end): the caller then stops, tracks
	// again and lists again. It fails with session.ErrNoPersistent if the
	// server has no persistent watches.
	TrackDir(ctx context.Context, dir string) (next func(context.Context) (gone []string, look bool, err error), stop func(), sid int64, err error)
}

// tracking is a Tracker's subscription.
type tracking struct {
	next func(context.Context) ([]string, bool, error)
	stop func()
	sid  int64
}

// close stops t, if it was set.
func (t tracking) close() {
	if t.stop != nil {
		t.stop()
	}
}

// track subscribes to Dir's deletions; ok is false when the Conn cannot
// (not a Tracker, or a server without persistent watches).
func (p *Permits) track(ctx context.Context) (tk tracking, ok bool, err error) {
	tr, can := p.Conn.(Tracker)
	if !can {
		return tk, false, nil
	}
	tk.next, tk.stop, tk.sid, err = tr.TrackDir(ctx, p.Dir)
	if errors.Is(err, session.ErrNoPersistent) {
		return tk, false, nil
	}
	return tk, err == nil, err
}

// forget takes out of the chain the nodes whose deletion was seen; the
// bound is then exact: the permits of the nodes of our listing still
// there.
func (c *chain) forget(gone []string) {
	for _, name := range gone {
		if i := slices.IndexFunc(c.ahead, func(x Contender) bool { return x.Name == name }); i >= 0 {
			c.bound -= c.weight[i]
			c.ahead, c.weight = slices.Delete(c.ahead, i, i+1), slices.Delete(c.weight, i, i+1)
		}
	}
}

// acquireTracked is Acquire on a tracked directory: the tracking is set
// before our node's create and its listing, so that every deletion after
// the listing is seen, and a node knows exactly the permits ahead of it
// without any read. It returns ok false, having done nothing, when the
// Conn cannot track.
func (p *Permits) acquireTracked(ctx context.Context, q *Queue, r PermitRequest) (pm *Permit, ok bool, err error) {
	for {
		tk, ok, err := p.track(ctx)
		if err != nil {
			return nil, true, err
		} else if !ok {
			return nil, false, nil
		}
		n, err := q.create(ctx, permitData(r.Data, -1), true)
		if err != nil {
			tk.close()
			return nil, true, err
		}
		pm, err := p.waitTracked(ctx, q, n, r, tk)
		if err == nil {
			return pm, true, nil
		}
		q.Conn.Discard(n.path, n.owner)
		if !errors.Is(err, errGone) {
			return nil, true, err
		}
	}
}

// waitTracked waits until our node's permits fit, counting the nodes ahead
// of it from its listing less the deletions the tracking reports. It lists
// again only when the tracking may have missed one. The tracking is handed
// to the holder's goroutine, or stopped.
func (p *Permits) waitTracked(ctx context.Context, q *Queue, n node, r PermitRequest, tk tracking) (*Permit, error) {
	names, waited := n.listing, false
	for first := true; ; first = false {
		if tk.sid != n.owner {
			tk.close() // tracked under another session than our node's
			return nil, errGone
		}
		if names == nil {
			var err error
			if names, err = q.Conn.Children(ctx, p.Dir); errors.Is(err, client.ErrNoNode) {
				tk.close()
				return nil, errGone // the path was reaped: our node went with its session
			} else if err != nil {
				tk.close()
				return nil, err
			}
		}
		if first {
			if err := q.checkKinds(names); err != nil {
				tk.close()
				return nil, err
			}
		}
		v, err := p.look(names, n.name)
		if err != nil {
			tk.close()
			return nil, err
		}
		for v.ch.bound+r.N > p.Limit {
			if r.Try {
				tk.close()
				return nil, errs.ErrNotAcquired
			}
			waited = true
			gone, look, err := tk.next(ctx)
			if err != nil {
				tk.close()
				return nil, err
			}
			if look {
				tk.close()
				var ok bool
				if tk, ok, err = p.track(ctx); err != nil || !ok {
					return nil, cmp.Or(err, errGone) // start over
				}
				break // list again
			}
			v.ch.forget(gone)
		}
		if v.ch.bound+r.N <= p.Limit {
			return p.grantTracked(ctx, q, n, v, r, waited, tk)
		}
		names = nil
	}
}

// grantTracked is grant for a tracked node: the holder's goroutine counts
// the nodes ahead as the waiter did, and publishes our rank for the
// waiters behind that read ranks (Conn without persistent watches, or
// earlier zklock versions).
func (p *Permits) grantTracked(ctx context.Context, q *Queue, n node, v view, r PermitRequest, waited bool, tk tracking) (*Permit, error) {
	return p.hold(ctx, q, n, v, r, waited, func(ctx context.Context, rk *ranker) { rk.runTracked(ctx, v.ch, tk) }, tk.close)
}

// runTracked is run for a tracked holder: it publishes our rank whenever
// we owe it, and counts the nodes ahead from the deletions it is told of,
// listing again only when the tracking may have missed one.
func (rk *ranker) runTracked(ctx context.Context, ch chain, tk tracking) {
	defer func() { tk.close() }()
	for rk.publish(ctx, ch.bound) && ch.bound > 0 {
		gone, look, err := tk.next(ctx)
		switch {
		case err != nil:
			return // ctx ended: released, or the session is closing
		case !look:
			ch.forget(gone)
			continue
		}
		tk.close()
		var ok bool
		if tk, ok = rk.retrack(ctx); !ok {
			return
		}
		if ch, ok = rk.relist(ctx); !ok {
			return
		}
	}
}

// retrack tracks the directory again, trying a failed attempt again; false
// once we no longer hold, or the Conn can track no more.
func (rk *ranker) retrack(ctx context.Context) (tracking, bool) {
	for try := 0; ; try++ {
		tk, ok, err := rk.p.track(ctx)
		switch {
		case err == nil && ok && tk.sid == rk.h.Epoch.SessionID && rk.holds():
			return tk, true
		case err == nil:
			tk.close()
			return tracking{}, false // another session's, or no more tracking
		case !rk.pause(ctx, try):
			return tracking{}, false
		}
	}
}

var _ Tracker = (*session.Conn)(nil)
