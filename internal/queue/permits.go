package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/go-zookeeper/zk"
)

// KindPermit is a node of the one-queue semaphore (Permits).
const KindPermit = "permit-"

// Permits is a counting semaphore in one queue: each acquisition of n
// permits is one ephemeral sequential node directly under Dir, named
// "_c_<uuid>-<n>of<limit>permit-<seq>", and it holds while the permits of
// the nodes ahead of it plus its own n are at most Limit. Every node carries
// the limit in its name, so each listing checks it for free.
//
// # Ranks
//
// A node's rank is the most permits the live nodes at and ahead of it can
// hold. Every node watches exactly one node, its predecessor (the nearest
// node ahead that it has not seen go), and knows an upper bound on the
// permits ahead of it (chain): its listing's sum, less what it saw go, or
// the rank its predecessor published, whichever is lower. A holder whose
// rank drops below Limit (it saw its predecessor go, or read a lower rank
// there) publishes it: one write of its own node's data, which ends with
// PermitTag and the rank. Nothing else writes a permit node's data.
//
// # Safety
//
// A node is granted only on a bound: every figure overstates, since the
// nodes ahead of ours can only go (the server numbers new nodes above all
// others) and a published rank overstates from the moment it is written.
// Take the holders at one instant and h* the last in queue order: every
// other holder is ahead of h*, so h*'s bound counted them, and h* was
// granted only if they and its own n fitted in Limit.
//
// # Handoff without a listing
//
// A published rank is below Limit, so a write to its predecessor's data
// proves to a waiter of one permit that it fits: it holds at the event,
// without reading anything. A waiter of more reads the rank (the read sets
// its watch again). A holder keeps watching its predecessor and publishes
// again whenever its rank drops, so a change anywhere ahead travels down
// the holders, one write a hop, to the first node that may fit; a deletion
// wakes only the deleted node's successor. In a long queue a contended
// lease costs six requests: the create and its pipelined listing, the read
// that sets the watch, the holder's read of its predecessor after its grant
// (the event consumed the watch, and a holder must see its predecessor go:
// it may crash, and the node behind waits for our rank), the rank it
// publishes when it becomes first, and the delete.
//
// # Liveness
//
// By induction from the head: a node whose predecessor went learns it (its
// watch), and every holder whose rank drops below Limit publishes it, so
// the first node that fits is told. A session change, or a write to the
// predecessor's data by anything but its holder, which a watcher cannot
// tell from a rank, is looked at again: a listing. Only zklock writes a
// permit node's data; another client that does voids the handoff's proof.
type Permits struct {
	Conn  Conn
	Dir   string
	Limit int
}

// PermitRequest says how to acquire permits.
type PermitRequest struct {
	N    int
	Data []byte
	Try  bool // do not wait: fail with ErrFull when the permits are not free now
}

// Permit is a granted place in a Permits queue and its holder's watch on
// the nodes ahead, which Release stops.
type Permit struct {
	Held *Held
	stop context.CancelFunc
	done chan struct{}
}

// LimitError is returned, with our node removed, when the queue holds a
// node of another limit.
type LimitError struct {
	Dir   string
	Found int
}

func (e *LimitError) Error() string {
	return fmt.Sprintf("queue: %s holds a permit of a semaphore of %d", e.Dir, e.Found)
}

// queue is the Queue our node is created through.
func (p *Permits) queue(n int) *Queue {
	return &Queue{Conn: p.Conn, Dir: p.Dir, Kind: fmt.Sprintf("%dof%d%s", n, p.Limit, KindPermit),
		Accept: []string{KindPermit}, OneKind: true}
}

// PermitWeight returns the permits and the limit a permit node's name
// carries; ok is false for a name that is not a well-formed permit node.
func PermitWeight(name string) (n, limit int, ok bool) {
	i := strings.LastIndex(name, KindPermit)
	if i < 0 {
		return 0, 0, false
	}
	head := name[:i]
	head = head[strings.LastIndex(head, "-")+1:] // "<n>of<limit>"
	ns, ls, found := strings.Cut(head, "of")
	if !found {
		return 0, 0, false
	}
	n, err1 := strconv.Atoi(ns)
	limit, err2 := strconv.Atoi(ls)
	if err1 != nil || err2 != nil || n < 1 || limit < n {
		return 0, 0, false
	}
	return n, limit, true
}

// Acquire takes r.N permits, all or none, waiting unless r.Try. On any
// failure our node is removed before it returns (or, when the server cannot
// be reached, in the background). If the session expires while it waits,
// it starts over under the new session until ctx ends.
func (p *Permits) Acquire(ctx context.Context, r PermitRequest) (*Permit, error) {
	q := p.queue(r.N)
	for {
		n, err := q.create(ctx, permitData(r.Data, -1), true)
		if err != nil {
			return nil, err
		}
		pm, err := p.wait(ctx, q, n, r)
		if err == nil {
			return pm, nil
		}
		q.Conn.Discard(n.path, n.owner)
		if !errors.Is(err, errGone) {
			return nil, err
		}
	}
}

// look reads a listing: our node and the chain ahead of it. A permit node
// of another limit is refused.
func (p *Permits) look(names []string, name string) (Contender, chain, error) {
	var ch chain
	for _, c := range Sort(names, KindPermit) {
		n, limit, ok := PermitWeight(c.Name)
		if !ok {
			continue // not a zklock permit: ignored, like any stranger
		}
		if limit != p.Limit {
			return Contender{}, ch, &LimitError{Dir: p.Dir, Found: limit}
		}
		if c.Name == name {
			return c, ch, nil
		}
		ch.ahead, ch.weight = append(ch.ahead, c), append(ch.weight, n)
		ch.bound += n
	}
	return Contender{}, ch, errGone
}

// wait waits until our node's permits fit, listing the queue at first and
// whenever what it watches gives no answer (see Permits).
func (p *Permits) wait(ctx context.Context, q *Queue, n node, r PermitRequest) (*Permit, error) {
	names := n.listing // taken with the create, when it was
	for first, waited := true, false; ; first, waited = false, true {
		if names == nil {
			var err error
			if names, err = q.Conn.Children(ctx, p.Dir); errors.Is(err, zk.ErrNoNode) {
				return nil, errGone // the path was reaped: our node went with its session
			} else if err != nil {
				return nil, err
			}
		}
		if first {
			if err := q.checkKinds(names); err != nil {
				return nil, err
			}
		}
		ours, ch, err := p.look(names, n.name)
		if err != nil {
			return nil, err
		}
		pm, err := p.follow(ctx, q, n, ours, ch, r, waited)
		if pm != nil || err != nil {
			return pm, err
		}
		names = nil
	}
}

// follow waits on our predecessor until our permits fit; nil, nil when it
// must list again.
func (p *Permits) follow(ctx context.Context, q *Queue, n node, ours Contender, ch chain, r PermitRequest, waited bool) (*Permit, error) {
	var pending func(context.Context) (Change, error) // a watch set on the predecessor
	for {
		if ch.bound+r.N <= p.Limit {
			return p.grant(ctx, q, n, ours, ch, r, waited, pending)
		}
		if r.Try {
			return nil, ErrFull
		}
		waited = true
		if pending == nil {
			data, ok, wait, err := q.Conn.ReadWatch(ctx, p.Dir+"/"+ch.pred().Name)
			if err != nil {
				return nil, err
			}
			// A watch set under a later session than our node's would
			// sleep through our node's end: look at the epoch once the
			// watch is set (if it ends after, the wait says LookAgain).
			if ep, err := q.Conn.Epoch(ctx); err != nil {
				return nil, err
			} else if ep.SessionID != n.owner {
				return nil, errGone
			}
			if !ok {
				ch.drop()
				continue
			}
			if rank, ok := PermitRank(data); ok {
				ch.learn(rank)
			}
			pending = wait
			continue
		}
		change, err := pending(ctx)
		pending = nil
		switch {
		case err != nil:
			return nil, err
		case change == Deleted:
			ch.drop()
		case change == Released && r.N == 1:
			ch.learn(p.Limit - 1) // the predecessor published a rank below the limit
		case change == LookAgain:
			return nil, nil
		}
		// Released for more than one permit: read the rank (pending is nil).
	}
}

// grant claims our node and, while nodes may be ahead of it, starts its
// holder's watch on them (continuing pending, a watch already set on the
// predecessor). A node that waited publishes its rank at once if it is
// below the limit: the node behind ours may have listed before what let us
// in, and cannot see it.
func (p *Permits) grant(ctx context.Context, q *Queue, n node, ours Contender, ch chain, r PermitRequest, waited bool, pending func(context.Context) (Change, error)) (*Permit, error) {
	h, err := q.grant(ctx, n, ours)
	if err != nil {
		return nil, err
	}
	h.Waited = waited
	rk := &ranker{p: p, h: h, n: r.N, data: r.Data, published: ch.bound + r.N}
	if waited {
		rk.published = p.Limit
		rk.publish(ctx, ch.bound)
	}
	wctx, cancel := context.WithCancel(context.Background())
	pm := &Permit{Held: h, stop: cancel, done: make(chan struct{})}
	if ch.bound == 0 || !q.Conn.Go(func(bg context.Context) {
		defer close(pm.done)
		defer context.AfterFunc(bg, cancel)()
		rk.follow(wctx, ch, pending)
	}) {
		close(pm.done) // nothing ahead to watch, or the session is closing
	}
	return pm, nil
}

// ranker publishes a holder's rank.
type ranker struct {
	p         *Permits
	h         *Held
	n         int
	data      []byte
	published int // the lowest rank the node behind ours can know of
}

// publish writes our rank, bound plus our permits, if it is below the
// limit and below what the node behind can know already.
func (rk *ranker) publish(ctx context.Context, bound int) {
	rank := bound + rk.n
	if rank >= rk.p.Limit || rank >= rk.published {
		return
	}
	rk.published = rank
	// An error leaves nothing to undo: the node went (released, or with
	// its session), or the session is closing.
	_ = rk.p.Conn.SetData(ctx, rk.h.Path, permitData(rk.data, rank), -1)
}

// follow is a holder's watch on the nodes ahead of it: it follows them,
// nearest first, and publishes our rank whenever it drops, until none is
// left ahead, ctx ends or the epoch does.
func (rk *ranker) follow(ctx context.Context, ch chain, pending func(context.Context) (Change, error)) {
	for ch.bound > 0 {
		select {
		case <-rk.h.Epoch.Done:
			return
		default:
		}
		if pending == nil {
			data, ok, wait, err := rk.p.Conn.ReadWatch(ctx, rk.p.Dir+"/"+ch.pred().Name)
			if err != nil {
				return // ctx ended: released, or the session is closing
			}
			select {
			case <-rk.h.Epoch.Done:
				return // the watch may be the next session's
			default:
			}
			if !ok {
				ch.drop()
				rk.publish(ctx, ch.bound)
				continue
			}
			if rank, ok := PermitRank(data); ok {
				ch.learn(rank)
				rk.publish(ctx, ch.bound)
			}
			pending = wait
			continue
		}
		change, err := pending(ctx)
		pending = nil
		if err != nil {
			return
		}
		if change == Deleted {
			ch.drop()
			rk.publish(ctx, ch.bound)
		}
		// Released or LookAgain: read the predecessor again.
	}
}

// Release deletes our node (see Queue.Release), then stops the holder's
// watch; when the delete fails for want of time the node is still held and
// the watch goes on.
func (p *Permits) Release(ctx context.Context, pm *Permit) error {
	err := p.queue(1).release(ctx, pm.Held, false)
	if err == nil || errors.Is(err, ErrLost) {
		pm.Stop()
	}
	return err
}

// Stop ends the holder's watch of a permit whose ownership ended.
func (pm *Permit) Stop() {
	pm.stop()
	<-pm.done
}
