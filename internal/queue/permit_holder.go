package queue

import (
	"context"
	"errors"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// grant claims our node and starts its holder's goroutine (see ranker)
// while nodes may be ahead of it or it owes the node behind its rank:
// after a wait, or at once with nodes behind it in the listing, the node
// behind may have listed before what lets us in, and cannot see it. pending
// is a watch already set on the predecessor.
func (p *Permits) grant(ctx context.Context, q *Queue, n node, v view, r PermitRequest, waited bool, pending waitFn) (*Permit, error) {
	return p.hold(ctx, q, n, v, r, waited, func(ctx context.Context, rk *ranker) { rk.run(ctx, v.ch, pending) }, nil)
}

// hold is grant's and grantTracked's common part: our node granted, the
// permit made, and run started in the holder's goroutine when there is
// something to watch or write; done (if set) is called when run is not
// started, or when grant fails.
func (p *Permits) hold(ctx context.Context, q *Queue, n node, v view, r PermitRequest, waited bool,
	run func(context.Context, *ranker), done func()) (*Permit, error) {
	h, err := q.grant(ctx, n)
	if err != nil {
		if done != nil {
			done()
		}
		return nil, err
	}
	h.Waited = waited
	rk := &ranker{p: p, h: h, n: r.N, data: r.Data, published: v.ch.bound + r.N}
	if waited || v.behind {
		rk.published = p.Limit
	}
	wctx, cancel := context.WithCancel(context.Background())
	pm := &Permit{Held: h, stop: cancel, done: make(chan struct{})}
	if (v.ch.bound == 0 && !rk.owes(0)) || !q.Conn.Go(func(bg context.Context) {
		defer close(pm.done)
		defer context.AfterFunc(bg, cancel)()
		run(wctx, rk)
	}) {
		if done != nil {
			done()
		}
		close(pm.done) // nothing to watch or write, or the session is closing
	}
	return pm, nil
}

// ranker is a holder's goroutine: it publishes our rank, and follows the
// nodes ahead of ours, nearest first, until none is left ahead, ctx ends
// (Release, Stop, Close) or the epoch does. Failed requests are tried
// again, after a pause, for as long as we hold: a waiter that fits may be
// waiting for our rank.
type ranker struct {
	p         *Permits
	h         *Held
	n         int
	data      []byte
	published int // the lowest rank the node behind ours can know of
}

// owes reports whether the node behind ours must be told of our rank,
// bound plus our permits: it is below the limit and below what that node
// can know.
func (rk *ranker) owes(bound int) bool {
	rank := bound + rk.n
	return rank < rk.p.Limit && rank < rk.published
}

// publish writes our rank if we owe it; false once we no longer hold.
func (rk *ranker) publish(ctx context.Context, bound int) bool {
	for try := 0; rk.owes(bound); try++ {
		err := rk.p.Conn.SetData(ctx, rk.h.Path, permitData(rk.data, bound+rk.n), -1)
		switch {
		case err == nil:
			rk.published = bound + rk.n
		case errors.Is(err, client.ErrNoNode):
			return false // released, or gone with the session
		case !rk.pause(ctx, try):
			return false
		}
	}
	return true
}

// pause waits before a request is tried again (10ms, doubling to a
// second); false if ctx or the epoch ends first.
func (rk *ranker) pause(ctx context.Context, try int) bool {
	t := time.NewTimer(min(10*time.Millisecond<<min(try, 7), time.Second))
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
	case <-rk.h.Epoch.Done:
	}
	return false
}

func (rk *ranker) run(ctx context.Context, ch chain, pending waitFn) {
	for rk.publish(ctx, ch.bound) && ch.bound > 0 {
		var ok bool
		if pending == nil {
			if pending, ok = rk.watch(ctx, &ch); !ok {
				return
			}
			if pending == nil { // the predecessor had gone: list, as a waiter does
				if ch, ok = rk.relist(ctx); !ok {
					return
				}
			}
			continue // a rank read may be owed to the node behind
		}
		change, err := pending(ctx)
		pending = nil
		if err != nil {
			return // ctx ended: released, or the session is closing
		}
		if change != Deleted {
			continue // Released or LookAgain: read the predecessor again
		}
		if ch.drop(); ch.bound > 0 {
			if ch, ok = rk.relist(ctx); !ok {
				return
			}
		}
	}
}

// watch reads the predecessor's rank and sets a watch on it, trying a
// failed read again; a nil wait if the predecessor is gone, false once we
// no longer hold.
func (rk *ranker) watch(ctx context.Context, ch *chain) (waitFn, bool) {
	for try := 0; ; try++ {
		data, ok, w, err := rk.p.Conn.ReadWatch(ctx, rk.p.Dir+"/"+ch.pred().Name)
		switch {
		case err == nil && !rk.holds():
			return nil, false // the watch may be the next session's
		case err == nil && !ok:
			return nil, true
		case err == nil:
			if rank, ok := PermitRank(data); ok {
				ch.learn(rank)
			}
			return w, true
		case !rk.pause(ctx, try):
			return nil, false
		}
	}
}

// holds reports whether our epoch lives.
func (rk *ranker) holds() bool {
	select {
	case <-rk.h.Epoch.Done:
		return false
	default:
		return true
	}
}

// relist lists the queue and returns the chain ahead of our node; false
// once our node is gone, or ctx or the epoch ends.
func (rk *ranker) relist(ctx context.Context) (chain, bool) {
	for try := 0; ; try++ {
		names, err := rk.p.Conn.Children(ctx, rk.p.Dir)
		if err == nil {
			v, err := rk.p.look(names, rk.h.Node().Name)
			return v.ch, err == nil
		}
		if errors.Is(err, client.ErrNoNode) || !rk.pause(ctx, try) {
			return chain{}, false
		}
	}
}

// Release deletes our node (see Queue.Release), then stops the holder's
// goroutine; when the delete fails for want of time the node is still held
// and the goroutine goes on.
func (p *Permits) Release(ctx context.Context, pm *Permit) error {
	err := p.queue(1).release(ctx, pm.Held, false)
	if err == nil || errors.Is(err, errs.ErrLockLost) {
		pm.Stop()
	}
	return err
}

// Stop ends the holder's goroutine of a permit whose ownership ended.
func (pm *Permit) Stop() {
	pm.stop()
	<-pm.done
}
