package queue

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// Leases is a counting semaphore in the layout of Apache Curator's
// InterProcessSemaphoreV2: a mutex of "lock-" nodes under Dir/locks and one
// "_c_<uuid>-lease-<seq>" node per lease under Dir/leases. As in Curator,
// every child of Dir/leases counts as a lease, whoever made it.
//
// # Safety
//
// An acquisition creates all its lease nodes, then lists Dir/leases, and is
// granted only if the listing has at most Limit children. Curator's holders
// obey the same rule. That alone bounds the holders: take any set G of
// acquisitions holding at one instant t, and g* the one whose last create has
// the highest zxid. ZooKeeper orders all writes (ZAB), and a server answers a
// client's read only after applying that client's earlier writes (also
// across a reconnect: a server behind the client's last seen zxid refuses
// the connection), so g*'s listing reflects every write up to g*'s last
// create (maybe not later ones), which includes the creates of every node
// of G. None of those nodes had been deleted: each is deleted only after t
// (by its holder's release or its session's end), and the listing was
// answered before t. So g* counted all of G's nodes, and was granted only
// because they numbered at most Limit.
//
// The mutex is for fairness and to spare the server a herd, not for safety:
// only its holder watches Dir/leases. When nobody waits on the mutex, an
// acquisition skips it (the fast path: list locks, create, list leases; four
// requests per cycle with the release, against Curator's seven). When the
// fast path finds the semaphore full, it deletes its nodes and queues on the
// mutex like Curator. While acquisitions through this Leases keep having to
// queue, they go straight to the mutex: the look at it would find waiters.
// The deleted nodes of a failed fast path never block anyone for long, and
// a failed fast path never waits, so no two clients can wait for each
// other's leases: only the mutex holder waits with its leases in place.
//
// A Leases must not be copied once used.
type Leases struct {
	Conn  Conn
	Dir   string // the semaphore path
	Limit int

	// contended is set while acquisitions have to queue: the fast path would
	// then find the mutex taken, and looking costs a request per cycle.
	contended atomic.Bool
	// verified is the czxid of the leases node under which the stored
	// limit was last checked (lease_limit.go).
	verified atomic.Int64
}

// Grant is a set of leases acquired together.
type Grant struct {
	Held []*Held
	// DirCzxid is the czxid of Dir/leases when granted. It identifies the
	// incarnation of Dir: Dir can be reaped (a CONTAINER) only once
	// Dir/leases is, and a re-created Dir/leases has a new czxid.
	DirCzxid int64
}

// LeaseRequest says how to acquire leases.
type LeaseRequest struct {
	N    int
	Data []byte
	Try  bool // do not wait: fail with errs.ErrNotAcquired when the leases are not free now
	// Check, if set, runs after the count admitted us and before the grant,
	// while our nodes pin Dir's incarnation (dirCzxid); an error fails the
	// acquisition.
	Check func(ctx context.Context, dirCzxid int64) error
	// Precheck, if set, runs before the acquisition waits, queues or fails
	// for want of leases: with dirCzxid when a listing of the leases with
	// our nodes in place found too many, and with 0 when it is about to
	// queue (or a Try to fail) behind waiters without having listed them.
	// An error fails the acquisition at once, with every node it made
	// removed: a client that can never be granted must not wait or queue.
	Precheck func(ctx context.Context, dirCzxid int64) error
}

// errOver reports that the fast path found more leases than Limit.
var errOver = errors.New("queue: over the limit")

// LocksDir and LeasesDir return the parents of the two kinds of node.
func (l *Leases) LocksDir() string  { return l.Dir + "/" + LocksChild }
func (l *Leases) LeasesDir() string { return l.Dir + "/" + LeasesChild }

// LockQueue is the mutex waiters queue up on.
func (l *Leases) LockQueue() *Queue {
	return &Queue{Conn: l.Conn, Dir: l.LocksDir(), Rules: lockRules}
}

// The rules of a semaphore's mutex and of its leases.
var (
	lockRules  = &Rules{Kind: KindLock, Accept: []string{KindLock}}
	leaseRules = &Rules{Kind: KindLease, Accept: []string{KindLease}}
)

// LeaseQueue lists the leases (in sequence order) and releases them.
func (l *Leases) LeaseQueue() *Queue {
	return &Queue{Conn: l.Conn, Dir: l.LeasesDir(), Rules: leaseRules}
}

// Acquire takes r.N leases, all or none. On any failure every node it
// created is removed before it returns (or, when the server cannot be
// reached, in the background). If the session expires while it waits, it
// starts over under the new session until ctx ends.
func (l *Leases) Acquire(ctx context.Context, r LeaseRequest) (*Grant, error) {
	for {
		g, err := l.acquire(ctx, r)
		if !errors.Is(err, errGone) {
			return g, err
		}
	}
}

func (l *Leases) acquire(ctx context.Context, r LeaseRequest) (*Grant, error) {
	if r.Try || !l.contended.Load() {
		waiters, err := l.Conn.Children(ctx, l.LocksDir())
		if err != nil && !errors.Is(err, client.ErrNoNode) {
			return nil, err
		}
		if len(waiters) == 0 { // nobody queued: we may not overtake anyone
			g, err := l.fast(ctx, r)
			if !errors.Is(err, errOver) {
				return g, err
			}
			return l.behind(ctx, r) // the fast path's listing ran Precheck
		}
	}
	if r.Precheck != nil {
		if err := r.Precheck(ctx, 0); err != nil {
			return nil, err
		}
	}
	return l.behind(ctx, r)
}

// behind is the acquisition that found others ahead of it: a Try fails,
// anything else queues.
func (l *Leases) behind(ctx context.Context, r LeaseRequest) (*Grant, error) {
	if r.Try {
		return nil, errs.ErrNotAcquired
	}
	return l.slow(ctx, r)
}

func (l *Leases) fast(ctx context.Context, r LeaseRequest) (*Grant, error) {
	ns, err := l.create(ctx, r)
	if err != nil {
		l.discard(ns)
		return nil, err
	}
	g, err := l.try(ctx, ns, r, nil)
	if err == nil && g == nil {
		err = errOver
	}
	if err != nil {
		l.discard(ns)
	}
	return g, err
}

// create makes r.N lease nodes; on failure it returns those it made, for
// the caller to discard.
func (l *Leases) create(ctx context.Context, r LeaseRequest) ([]node, error) {
	q := l.LeaseQueue()
	ns := make([]node, 0, r.N+1)
	for range r.N {
		n, err := q.create(ctx, r.Data, false) // the lease count is listed once all are made
		if err != nil {
			return ns, err
		}
		ns = append(ns, n)
	}
	return ns, nil
}

// discard removes nodes all at once, so that a cancelled acquisition waits
// for the server one cleanup grace at most, however many nodes it made.
func (l *Leases) discard(ns []node) {
	var wg sync.WaitGroup
	for _, n := range ns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			l.Conn.Discard(n.path, n.owner)
		}()
	}
	wg.Wait()
}
