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
// # Safety
//
// A node is granted only on a count that can only overstate the permits
// ahead of it: an exact listing, or a listing less the permits of nodes it
// has since seen deleted (nodes ahead of ours were all in our first
// listing, and none can be added ahead of ours, as the server numbers new
// nodes above all others). Take the holders at one instant and h* the last
// in queue order: every other holder is ahead of h*, so its count included
// them, and it was granted only if they and its own fitted in Limit.
//
// # Liveness without a herd
//
// Every node watches exactly one node: the nearest one ahead of it. A
// waiter whose watched node is deleted subtracts its permits and holds if
// it then fits, without a listing; otherwise it lists again (the nodes
// ahead of the deleted one have usually gone too: looking at them one by
// one would cost a request each). Nodes further ahead can leave first (a
// holder releasing out of order, a session expiring), which no watcher of
// ours sees: so a holder with nodes ahead of it keeps watching them, and
// whenever one ahead of it goes (deleted, or its watched node relays) it
// relays: it sets its own node's data, which wakes the node behind it,
// which lists the queue again (a relay is not proof, since the deletion
// behind it may predate that node's listing) and relays in turn if it is
// a holder. A waiter granted after waiting relays too when permits are
// left behind it. Watches are set on a data version (Conn.WaitData): the
// version read before the last listing, or 0, the one a node is created
// with, so a relay made between a listing (or a grant) and the watch set
// after it returns the watch at once instead of being missed; an old relay
// costs a listing for nothing. By induction from the front, a node that
// fits is woken:
// whatever it watches either went (it wakes), or is a waiter that fits too
// (it is woken first and relays on its grant, or, granted on an estimate,
// its holder's watch finds the deletion and relays), or is a holder that
// saw the change ahead of it (and relays). Each deletion or relay wakes
// one node. A contended lease costs about seven requests: the create and
// its pipelined listing, the watch, a listing on the wake, a relay by the
// holder ahead when the first holder leaves first, the holder's own watch
// when a holder is ahead of it, the delete, and now and then a version read
// and a listing when the node ahead relayed before our watch was set.
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

// Permit is a granted place in a Permits queue and its holder's relay
// watch, which Release stops.
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
		n, err := q.create(ctx, r.Data, true)
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

// view is what a listing says about our node: the permit nodes ahead of
// ours in queue order (nearest last), with the permits they hold.
type view struct {
	ours   Contender
	ahead  []Contender
	weight []int
	rank   int // permits ahead of ours
}

// look reads a listing. A permit node of another limit is refused.
func (p *Permits) look(names []string, name string) (view, error) {
	var v view
	cs := Sort(names, KindPermit)
	found := false
	for _, c := range cs {
		n, limit, ok := PermitWeight(c.Name)
		if !ok {
			continue // not a zklock permit: ignored, like any stranger
		}
		if limit != p.Limit {
			return v, &LimitError{Dir: p.Dir, Found: limit}
		}
		if c.Name == name {
			v.ours, found = c, true
			break
		}
		v.ahead, v.weight = append(v.ahead, c), append(v.weight, n)
		v.rank += n
	}
	if !found {
		return v, errGone
	}
	return v, nil
}

// wait waits until our node's permits fit.
func (p *Permits) wait(ctx context.Context, q *Queue, n node, r PermitRequest) (*Permit, error) {
	names := n.listing // taken with the create, when it was
	// versions are the data versions of nodes ahead, as read before the
	// listing that followed; a node not in it is taken at its creation's
	// version, 0. A relay (a write to a node's data) after that read makes
	// the watch on it return at once, so none is missed between a listing
	// and the watch set after it.
	versions := map[string]int32{}
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
		v, err := p.look(names, n.name)
		if err != nil {
			return nil, err
		}
		if v.rank+r.N <= p.Limit {
			return p.grant(ctx, q, n, v, r, waited)
		}
		if r.Try {
			return nil, ErrFull
		}
		// Watch the nearest node ahead. Its deletion is subtracted without
		// a listing: if that lets us in, we hold. Otherwise the nodes ahead
		// of it have usually gone too (a queue empties in order), so a
		// listing costs less than looking at them one by one. A relay (its
		// data changed since the version we know) or a session change lists
		// as well.
		pred := v.ahead[len(v.ahead)-1]
		ch, err := q.Conn.WaitData(ctx, p.Dir+"/"+pred.Name, versions[pred.Name])
		if err != nil {
			return nil, err
		}
		if ch == Deleted {
			v.rank -= v.weight[len(v.weight)-1]
			v.ahead, v.weight = v.ahead[:len(v.ahead)-1], v.weight[:len(v.weight)-1]
			if v.rank+r.N <= p.Limit {
				return p.grant(ctx, q, n, v, r, true)
			}
		} else if err := p.learnVersion(ctx, versions, pred.Name); err != nil {
			return nil, err
		}
		names = nil
	}
}

// learnVersion reads the current data version of the node ahead after a
// relay or a session change, before the listing that follows, so that the
// next watch on it misses no later relay.
func (p *Permits) learnVersion(ctx context.Context, versions map[string]int32, name string) error {
	st, err := p.Conn.Stat(ctx, p.Dir+"/"+name)
	switch {
	case err != nil:
		return err
	case st != nil:
		versions[name] = st.Version
	}
	return nil
}

// grant claims our node and starts its relay watch. v.rank may overstate
// the permits ahead (see Permits): it is exact or an upper bound.
func (p *Permits) grant(ctx context.Context, q *Queue, n node, v view, r PermitRequest, waited bool) (*Permit, error) {
	h, err := q.grant(ctx, n, v.ours)
	if err != nil {
		return nil, err
	}
	h.Waited = waited
	data := q.nodeData(r.Data)
	if waited && v.rank+r.N < p.Limit {
		// What let us in may let in the node behind us, which cannot
		// have seen it (see Permits).
		p.relay(ctx, h.Path, data)
	}
	wctx, cancel := context.WithCancel(context.Background())
	pm := &Permit{Held: h, stop: cancel, done: make(chan struct{})}
	if len(v.ahead) == 0 || !q.Conn.Go(func(bg context.Context) {
		defer close(pm.done)
		defer context.AfterFunc(bg, cancel)()
		p.watch(wctx, h, v.ahead, data)
	}) {
		close(pm.done) // nothing ahead to watch, or the session is closing
	}
	return pm, nil
}

// watch is a holder's relay watch: it follows the nodes ahead of ours,
// nearest first, and relays every change among them to the node behind
// ours, until none is left ahead, ctx ends or the epoch does.
func (p *Permits) watch(ctx context.Context, h *Held, ahead []Contender, data []byte) {
	// The version of the watched node's data we know: 0 at first (a node is
	// created at 0), so that a relay it made before this watch was set,
	// perhaps for a deletion the node behind us has not seen, wakes us at
	// once; such an old relay makes us relay once for nothing, which costs
	// the node behind us a listing.
	var ver int32
	for len(ahead) > 0 {
		select {
		case <-h.Epoch.Done:
			return
		default:
		}
		path := p.Dir + "/" + ahead[len(ahead)-1].Name
		ch, err := p.Conn.WaitData(ctx, path, ver)
		if err != nil {
			return // ctx ended: released, or the session is closing
		}
		if ch == Deleted {
			ahead, ver = ahead[:len(ahead)-1], 0
		} else {
			// The node ahead relayed, or the session changed: read its
			// version before relaying, so that a relay it makes after
			// ours wakes us again.
			st, err := p.Conn.Stat(ctx, path)
			if err != nil {
				return
			}
			if st == nil {
				ahead, ver = ahead[:len(ahead)-1], 0
			} else {
				ver = st.Version
			}
		}
		p.relay(ctx, h.Path, data)
	}
}

// relay wakes the node behind ours by setting our node's data, unchanged.
func (p *Permits) relay(ctx context.Context, path string, data []byte) {
	_ = p.Conn.SetData(ctx, path, data, -1)
}

// Release deletes our node (see Queue.Release), then stops the relay
// watch; when the delete fails for want of time the node is still held and
// the watch goes on.
func (p *Permits) Release(ctx context.Context, pm *Permit) error {
	err := p.queue(1).release(ctx, pm.Held, false)
	if err == nil || errors.Is(err, ErrLost) {
		pm.Stop()
	}
	return err
}

// Stop ends the relay watch of a permit whose ownership ended.
func (pm *Permit) Stop() {
	pm.stop()
	<-pm.done
}
