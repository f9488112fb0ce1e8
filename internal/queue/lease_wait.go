package queue

import (
	"context"
	"errors"
	"slices"

	"github.com/zklock/zklock/internal/client"
)

// slow is Curator's algorithm: hold the mutex, create our leases, and wait
// until they fit. Only the mutex holder watches the lease set, so a release
// wakes one client, not every waiter.
func (l *Leases) slow(ctx context.Context, r LeaseRequest) (*Grant, error) {
	m, err := l.LockQueue().Acquire(ctx, Request{Data: r.Data})
	if err != nil {
		return nil, err
	}
	// The mutex is released whatever ctx says: a mutex node left behind
	// would stall every waiter. On failure it goes with our leases, in one
	// discard.
	defer l.Conn.Untrack(m.Epoch, &m.Tracked)
	mutex := node{path: m.Path, owner: m.Epoch.SessionID}
	ns, err := l.create(ctx, r)
	if err == nil {
		var g *Grant
		var waited bool
		if g, waited, err = l.await(ctx, ns, r); err == nil {
			l.discard([]node{mutex})
			l.contended.Store(m.Waited || waited)
			if !l.vouch(g) {
				return nil, errGone
			}
			return g, nil
		}
	}
	l.discard(append(ns, mutex))
	return nil, err
}

// vouch reports whether g's epoch is still live after the mutex's release,
// a round trip after the grant: a process frozen in it (SIGSTOP, a long
// pause) may run again past its ownership deadline, its session expired
// and its leases handed to others. Such a grant is given up, not returned
// (seed 20261125: a lease returned 3.6s after its grant, lost 1.7ms later).
func (l *Leases) vouch(g *Grant) bool {
	// All of g's nodes were granted in one epoch; Track refuses once its
	// deadline has passed.
	ep := g.Held[0].Epoch
	if l.Conn.Track(ep, &g.Held[0].Tracked) {
		return true
	}
	for _, h := range g.Held {
		l.Conn.Untrack(ep, &h.Tracked)
	}
	return false
}

// await waits until ns fit within the limit; waited reports that they did
// not at first.
func (l *Leases) await(ctx context.Context, ns []node, r LeaseRequest) (g *Grant, waited bool, err error) {
	for ; ; waited = true {
		var changed <-chan client.Event
		g, err := l.try(ctx, ns, r, &changed)
		if errors.Is(err, errGone) && changed != nil {
			// Our nodes went (with an expired session, or deleted by
			// another client): no change of ours will fire the watch,
			// and on a directory nobody uses any more it would stay.
			l.Conn.StopChildren(l.LeasesDir(), changed)
		}
		if g != nil || err != nil {
			return g, waited, err
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, waited, ctx.Err()
		}
	}
}

// try lists the leases (leaving a child watch in *watch unless watch is
// nil) and grants ns if there are at most Limit; it returns a nil Grant and
// no error when there are more and r.Precheck lets us wait.
func (l *Leases) try(ctx context.Context, ns []node, r LeaseRequest, watch *<-chan client.Event) (*Grant, error) {
	var names []string
	var st *client.Stat
	var err error
	if watch != nil {
		names, st, *watch, err = l.Conn.ChildrenW(ctx, l.LeasesDir())
	} else {
		names, st, err = l.Conn.ChildrenStat(ctx, l.LeasesDir())
	}
	if errors.Is(err, client.ErrNoNode) {
		return nil, errGone
	}
	if err != nil {
		return nil, err
	}
	for _, n := range ns {
		if !slices.Contains(names, n.name) { // the session expired, or a node was deleted
			return nil, errGone
		}
	}
	if len(names) > l.Limit {
		if r.Precheck != nil {
			if err := r.Precheck(ctx, st.Czxid); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	return l.grant(ctx, ns, st.Czxid, r)
}

// grant claims ns only if they all belong to the session of a live epoch
// (see Queue.grant).
func (l *Leases) grant(ctx context.Context, ns []node, dirCzxid int64, r LeaseRequest) (*Grant, error) {
	if r.Check != nil {
		if err := r.Check(ctx, dirCzxid); err != nil {
			return nil, err
		}
	}
	ep, err := l.Conn.Epoch(ctx)
	if err != nil {
		return nil, err
	}
	g := &Grant{DirCzxid: dirCzxid}
	for _, n := range ns {
		h := &Held{Tracked: Tracked{Path: n.path}, Token: n.czxid, Epoch: ep}
		if n.owner != ep.SessionID || !l.Conn.Track(ep, &h.Tracked) {
			for _, x := range g.Held {
				l.Conn.Untrack(ep, &x.Tracked)
			}
			return nil, errGone
		}
		g.Held = append(g.Held, h)
	}
	return g, nil
}
