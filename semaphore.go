package zklock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/zklock/zklock/internal/queue"
)

// Semaphore is a distributed counting semaphore over ZooKeeper: at most
// limit leases, across all processes using the same path, are held at once.
//
// The layout is Apache Curator's InterProcessSemaphoreV2 (a mutex under
// <path>/locks, one _c_<uuid>-lease-<seq> node per lease under
// <path>/leases), so Curator processes can share the path; as in Curator,
// every child of <path>/leases counts as a lease. Other kinds of primitive
// cannot share it: an acquisition that finds a Mutex's, an Election's or an
// RWMutex's nodes directly under <path> fails at once with ErrWrongKind,
// and a Mutex, Election or RWMutex that finds <path>/locks or
// <path>/leases does too (until the server reaps those once the semaphore
// is idle).
//
// The limit is stored on the server, as the decimal text of <path>'s data,
// by the first zklock process to be granted a lease there; every later
// acquisition checks it and fails with ErrLimitMismatch if it differs from
// the Semaphore's own, smaller or larger. The check comes before the
// acquisition waits or queues: a Semaphore that can never be granted is
// refused at once, never left waiting for its ctx to end. (A Semaphore that
// verified the limit before, whose path was since re-created with another
// limit, may queue behind waiters once and is refused at the head of the
// queue, before it waits for leases.) When zklock creates <path> it is a
// CONTAINER node, reaped by the server once no lease or waiter is left, so
// the stored limit lasts as long as somebody uses the semaphore.
//
// Leases are ephemeral nodes: those of a crashed or expired client vanish
// with its session and are never counted for a live one. A holder cut off
// from the server is told by its Lease's Lost before the server can expire
// the session and hand the leases to others.
//
// Fairness: when clients are queued, a newcomer queues behind them in
// order; only the head of the queue watches the lease set, so a release
// wakes one client, not every waiter. When nobody is queued, an acquisition
// takes a fast path of three requests (four with the release; Curator needs
// seven).
//
// A Semaphore is safe for concurrent use: each Acquire returns its own
// Lease, and two goroutines holding one lease each count as two holders. It
// must not be copied.
type Semaphore struct {
	s     *Session
	l     queue.Leases
	p     *queue.Permits // WithQueueLayout; nil for Curator's layout
	path  string
	limit int
	data  []byte

	mu       sync.Mutex
	verified int64 // czxid of the leases node under which the stored limit was checked
}

// NewSemaphore returns a Semaphore on path allowing limit leases at once.
// Nothing is sent to the server until an acquisition. A limit below 1 is
// rejected with ErrInvalidArgument; the path rules are NewMutex's.
func NewSemaphore(s *Session, path string, limit int, opts ...Option) (*Semaphore, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: limit %d must be at least 1", ErrInvalidArgument, limit)
	}
	q, o, err := newQueue(s, path, queue.KindLease, nil, opts)
	if err != nil {
		return nil, err
	}
	if o.cohort != nil || o.revocable || o.maxHold > 0 {
		return nil, invalid("WithCohort, WithRevocable and WithMaxHold apply to locks only")
	}
	sem := &Semaphore{s: s, path: path, limit: limit, data: o.data}
	sem.l = queue.Leases{Conn: q.Conn, Dir: path, Limit: limit}
	if o.queueLayout {
		kind := fmt.Sprintf("%dof%d%s", limit, limit, queue.KindPermit)
		// A holder writes its rank after the data (queue.PermitTag).
		if err := s.opts.checkCreate(queue.LongestNode(path, kind), len(o.data)+queue.LongestTag); err != nil {
			return nil, err
		}
		sem.p = &queue.Permits{Conn: q.Conn, Dir: path, Limit: limit}
	}
	return sem, nil
}

// Acquire blocks until n leases are held together, ctx ends, or the session
// is closed; it takes all n or none. On error nothing is left on the server,
// and errors.Is(err, ctx.Err()) holds when ctx ended; Acquire returns within
// twice the cleanup grace of ctx's end (see Cleanup in the package doc). n below 1 or above the
// limit returns ErrInvalidArgument at once; a limit stored on the server
// that differs from s's returns ErrLimitMismatch without waiting, even
// while the leases are taken or other clients are queued, and a path that
// holds another kind of primitive's nodes returns a *WrongKindError
// (wrapping ErrWrongKind) without waiting. If the session expires while
// Acquire waits, it starts over under the new session.
func (s *Semaphore) Acquire(ctx context.Context, n int) (*Lease, error) {
	return s.acquire(ctx, n, false)
}

// TryAcquire is Acquire without waiting: when the n leases are not free at
// once, or other clients are queued for leases, it returns ErrNotAcquired
// and leaves nothing behind. A limit stored on the server that differs from
// s's returns ErrLimitMismatch, never ErrNotAcquired: retrying cannot help.
// Another kind of primitive on the path returns a *WrongKindError.
func (s *Semaphore) TryAcquire(ctx context.Context, n int) (*Lease, error) {
	return s.acquire(ctx, n, true)
}

func (s *Semaphore) acquire(ctx context.Context, n int, try bool) (*Lease, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if n < 1 || n > s.limit {
		return nil, fmt.Errorf("%w: %d leases of a semaphore of %d", ErrInvalidArgument, n, s.limit)
	}
	if s.p != nil {
		return s.acquirePermits(ctx, n, try)
	}
	start := s.s.now()
	g, err := s.l.Acquire(ctx, queue.LeaseRequest{N: n, Data: s.data, Try: try,
		Check: s.check, Precheck: s.precheck})
	switch {
	case errors.Is(err, queue.ErrFull):
		err = ErrNotAcquired
	case errors.Is(err, ErrWrongKind):
		s.dropLayout(ctx)
	}
	err = mapQueueErr(err)
	var last *queue.Held // identifies the Lease to Metrics
	if err == nil {
		last = g.Held[len(g.Held)-1]
	}
	s.s.acquired(KindSemaphore, s.path, start, last, err)
	if err != nil {
		return nil, err
	}
	return &Lease{sem: s, held: g.Held}, nil
}

// Holders lists the lease nodes present now, in the order they were
// created: the granted leases, and those of the client at the head of the
// queue while it waits for the count to drop to the limit. Each has Kind
// "lease-"; children of <path>/leases that are not lease nodes count against
// the limit but are not listed. With WithQueueLayout it lists the permit
// nodes (Kind "permit-") whose leases fit within the limit, in queue order:
// those granted, and any about to be.
func (s *Semaphore) Holders(ctx context.Context) ([]Contender, error) {
	if s.p != nil {
		h, _, err := s.listPermits(ctx)
		return h, err
	}
	return listContenders(ctx, s.l.LeaseQueue())
}

// Contenders lists the clients queued for leases, in the order they will be
// served: the first is the one waiting for leases to be released. With
// WithQueueLayout they are the permit nodes behind the holders.
func (s *Semaphore) Contenders(ctx context.Context) ([]Contender, error) {
	if s.p != nil {
		_, w, err := s.listPermits(ctx)
		return w, err
	}
	return listContenders(ctx, s.l.LockQueue())
}
