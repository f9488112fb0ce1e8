package queue

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
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
// permits ahead of it (chain): its listing's sum, or the rank its
// predecessor published, whichever is lower, less the permits of each node
// it saw alive and then deleted. A node it finds already gone may have gone
// before that rank was written, which then did not count it, so it lists
// the queue again; so does a waiter whose bound, after a deletion, still
// leaves no room (the nodes ahead have most likely gone too, and one
// listing costs less than a read for each). A holder
// whose rank drops below Limit (it saw its predecessor go, or read a lower
// rank there) publishes it: one write of its own node's data, which ends
// with PermitTag and the rank. Nothing else writes a permit node's data.
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
// # Tracking
//
// Where the Conn can (a Tracker: ZooKeeper 3.9 and later), a node instead
// counts the nodes ahead of it: the session's one persistent recursive
// watch on Dir, set before the node's create, reports every deletion
// there after the create's listing, so the permits of the listed nodes
// still there are known exactly, without a read or a watch per node (see
// acquireTracked). A holder still publishes its rank, for the waiters
// behind it that read ranks (a Conn without persistent watches, an earlier
// zklock). A contended lease then costs the create, the listing, the
// delete, and the rank when one is owed; the price is that every session
// waiting or holding on Dir hears of every change there (notifications,
// not requests). After a disconnection, whose events are lost, a node
// tracks again and lists again.
//
// # Liveness
//
// By induction from the head: a node whose predecessor went learns it (its
// watch), and every holder whose rank drops below what the node behind it
// can know publishes it, so the first node that fits is told. What the node
// behind can know is our listing's figure only if that listing showed
// nobody behind us (a later node lists later); after a wait, or with nodes
// behind, a rank below Limit is owed at once. A holder's goroutine tries
// failed reads and writes again for as long as it holds. A waiter lists
// again after a session change. Only zklock writes a permit node's data: a
// write by another client would be taken for a rank, and void the proof.
type Permits struct {
	Conn  Conn
	Dir   string
	Limit int
}

// PermitRequest says how to acquire permits.
type PermitRequest struct {
	N    int
	Data []byte
	Try  bool // do not wait: fail with errs.ErrNotAcquired when the permits are not free now
}

// Permit is a granted place in a Permits queue and its holder's watch on
// the nodes ahead, which Release stops.
type Permit struct {
	Held *Held
	stop context.CancelFunc
	done chan struct{}
}

// queue is the Queue our node is created through.
func (p *Permits) queue(n int) *Queue {
	return &Queue{Conn: p.Conn, Dir: p.Dir, Rules: &Rules{Kind: fmt.Sprintf("%dof%d%s", n, p.Limit, KindPermit),
		Accept: []string{KindPermit}, OneKind: true}}
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
	if r.N < 1 || r.N > p.Limit {
		return nil, fmt.Errorf("queue: %d permits of a limit of %d", r.N, p.Limit)
	}
	q := p.queue(r.N)
	if pm, tracked, err := p.acquireTracked(ctx, q, r); tracked {
		return pm, err
	}
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

// view is what a listing says about our node.
type view struct {
	ours   Contender
	ch     chain
	behind bool // a permit node follows ours
}

// look reads a listing. A permit node of another limit ahead of ours is
// refused.
func (p *Permits) look(names []string, name string) (view, error) {
	var v view
	found := false
	for _, c := range Sort(names, KindPermit) {
		n, limit, ok := PermitWeight(c.Name)
		switch {
		case !ok:
			continue // not a zklock permit: ignored, like any stranger
		case found:
			v.behind = true
			return v, nil
		case limit != p.Limit:
			return v, fmt.Errorf("%w: %s holds a permit of a semaphore of %d, this one has %d",
				errs.ErrLimitMismatch, p.Dir, limit, p.Limit)
		case c.Name == name:
			v.ours, found = c, true
			continue
		}
		v.ch.ahead, v.ch.weight = append(v.ch.ahead, c), append(v.ch.weight, n)
		v.ch.bound += n
	}
	if !found {
		return v, errGone
	}
	return v, nil
}

// wait waits until our node's permits fit, listing the queue at first and
// whenever what it watches gives no answer (see Permits).
func (p *Permits) wait(ctx context.Context, q *Queue, n node, r PermitRequest) (*Permit, error) {
	names := n.listing // taken with the create, when it was
	for first, waited := true, false; ; first, waited = false, true {
		if names == nil {
			var err error
			if names, err = q.Conn.Children(ctx, p.Dir); errors.Is(err, client.ErrNoNode) {
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
		v, err := p.look(names, n.name)
		if err != nil {
			return nil, err
		}
		pm, err := p.follow(ctx, q, n, v, r, waited)
		if pm != nil || err != nil {
			return pm, err
		}
		names = nil
	}
}

// waitFn is a watch's wait (Conn.ReadWatch).
type waitFn = func(context.Context) (Change, error)

// follow waits on our predecessor until our permits fit; nil, nil when it
// must list again.
func (p *Permits) follow(ctx context.Context, q *Queue, n node, v view, r PermitRequest, waited bool) (*Permit, error) {
	var pending waitFn // a watch set on the predecessor
	for {
		if v.ch.bound+r.N <= p.Limit {
			return p.grant(ctx, q, n, v, r, waited, pending)
		}
		if r.Try {
			return nil, errs.ErrNotAcquired
		}
		waited = true
		if pending == nil {
			data, ok, w, err := q.Conn.ReadWatch(ctx, p.Dir+"/"+v.ch.pred().Name)
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
				// Gone before we came to watch it: the nodes ahead of it
				// have most likely gone too, and one listing costs less than
				// a read for each (nor could a rank count them).
				return nil, nil
			}
			if rank, ok := PermitRank(data); ok {
				v.ch.learn(rank)
			}
			pending = w
			continue
		}
		change, err := pending(ctx)
		pending = nil
		switch {
		case err != nil:
			return nil, err
		case change == Deleted:
			if v.ch.drop(); v.ch.bound+r.N > p.Limit {
				return nil, nil // list: see above
			}
		case change == Released && r.N == 1:
			v.ch.learn(p.Limit - 1) // the predecessor published a rank below the limit
		case change == LookAgain:
			return nil, nil
		}
		// Released for more than one permit: read the rank (pending is nil).
	}
}
