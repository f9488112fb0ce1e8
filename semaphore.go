package zklock

import (
	"context"
	"fmt"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
)

// Semaphore is a distributed counting semaphore over ZooKeeper: at most
// limit leases, across all processes using the same path, are held at once.
//
// Its nodes are Apache Curator's InterProcessSemaphoreV2's, so Curator
// processes can share the path (docs/interop.md says what counts as a
// lease). Other kinds of primitive cannot: a Semaphore that finds their
// nodes on its path, or one of them that finds a Semaphore's, fails at once
// with ErrWrongKind.
//
// The first zklock process granted a lease stores the limit on the server;
// an acquisition by a Semaphore with another limit fails with
// ErrInvalidArgument before it waits or queues, so a Semaphore that can
// never be granted is refused at once (one that checked the path before it
// was re-created with another limit is refused at the queue's head). The
// limit lasts as long as somebody uses the semaphore.
//
// Leases are ephemeral nodes: those of a crashed or expired client vanish
// with its session and are never counted for a live one. A holder cut off
// from the server is told by its Lease's Lost before the server can expire
// the session and hand the leases to others.
//
// Fairness: a newcomer queues behind the clients already waiting, in order;
// only the head of the queue watches the lease set, so a release wakes one
// client, not every waiter.
//
// A Semaphore is safe for concurrent use: each Acquire returns its own
// Lease, and two goroutines holding one lease each count as two holders. It
// must not be copied, nor used unless NewSemaphore made it (else
// ErrInvalidArgument).
type Semaphore struct {
	line  *hold.Line
	q     *queue.Queue // the lease or permit queue, for listings
	locks *queue.Queue // Curator's layout: the waiters' queue; nil in the permit layout
	path  string
	limit int
	data  []byte
}

// semaphoreSpec is Curator's layout; WithPermitLayout's differs in its
// kind, its node and the option it takes (NewSemaphore).
var semaphoreSpec = spec{kind: KindSemaphore, node: queue.KindLease, errs: leaseErrs}

// NewSemaphore returns a Semaphore on path allowing limit leases at once.
// Nothing is sent to the server until an acquisition. A limit below 1 is
// rejected with ErrInvalidArgument; the path rules are NewMutex's.
func NewSemaphore(s *Session, path string, limit int, opts ...Option) (*Semaphore, error) {
	if limit < 1 {
		return nil, fmt.Errorf("%w: limit %d must be at least 1", ErrInvalidArgument, limit)
	}
	o, err := applyOptions(opts)
	if err != nil {
		return nil, err
	}
	sp := semaphoreSpec
	if o.permits {
		sp.node = fmt.Sprintf("%dof%d%s", limit, limit, queue.KindPermit) // the longest permit node
		sp.kind, sp.takes = KindSemaphorePermit, takesPermits
	}
	q, o, err := build(s, path, sp, opts)
	if err != nil {
		return nil, err
	}
	sem := &Semaphore{path: path, limit: limit, data: o.data}
	var p hold.Protocol
	if o.permits {
		pm := &queue.Permits{Conn: q.Conn, Dir: path, Limit: limit}
		p, sem.q = pm, &queue.Queue{Conn: q.Conn, Dir: path, Rules: permitListing}
	} else {
		l := &queue.Leases{Conn: q.Conn, Dir: path, Limit: limit}
		p, sem.q, sem.locks = l, l.LeaseQueue(), l.LockQueue()
	}
	sem.line, _ = s.line(q, p, sp, o)
	return sem, nil
}

// permitListing are the rules of the queue a permit semaphore's
// Contenders lists.
var permitListing = &queue.Rules{Accept: []string{queue.KindPermit}}

// leaseErrs are what a lease's Release returns.
var leaseErrs = &hold.Errs{Lost: errs.ErrLeaseLost, NotHeld: errs.ErrLeaseReleased}

// Acquire blocks until n leases are held together, ctx ends, or the session
// is closed; it takes all n or none. On error nothing is left on the server,
// and when ctx ended the error names the path and errors.Is(err,
// ctx.Err()) holds; Acquire returns within
// twice the cleanup grace of ctx's end (see Cleanup in the package doc). n below 1 or above the
// limit returns ErrInvalidArgument at once; a limit stored on the server
// that differs from s's returns ErrInvalidArgument without waiting, even
// while the leases are taken or other clients are queued, and a path that
// holds another kind of primitive's nodes returns a *WrongKindError
// (wrapping ErrWrongKind) without waiting. If the session expires while
// Acquire waits, it starts over under the new session.
func (s *Semaphore) Acquire(ctx context.Context, n int) (*Lease, error) {
	if s.unmade() {
		return nil, unmade("Semaphore", "NewSemaphore")
	}
	l, err := s.acquire(ctx, n, false)
	return l, named(ctx, "acquire", s.path, err)
}

// TryAcquire is Acquire without waiting: when the n leases are not free at
// once, or other clients are queued for leases, it returns ErrLocked
// and leaves nothing behind. A limit stored on the server that differs from
// s's returns ErrInvalidArgument, never ErrLocked: retrying cannot help.
// Another kind of primitive on the path returns a *WrongKindError.
func (s *Semaphore) TryAcquire(ctx context.Context, n int) (*Lease, error) {
	if s.unmade() {
		return nil, unmade("Semaphore", "NewSemaphore")
	}
	l, err := s.acquire(ctx, n, true)
	return l, named(ctx, "acquire", s.path, err)
}

func (s *Semaphore) acquire(ctx context.Context, n int, try bool) (*Lease, error) {
	if err := hold.CheckCtx(ctx); err != nil {
		return nil, err
	}
	if n < 1 || n > s.limit {
		return nil, fmt.Errorf("%w: %d leases of a semaphore of %d", ErrInvalidArgument, n, s.limit)
	}
	h, err := s.line.Acquire(ctx, queue.Request{N: n, Data: s.data, Try: try})
	if err != nil {
		return nil, err
	}
	return &Lease{line: s.line, h: h}, nil
}

// unmade reports that NewSemaphore did not make s (unmade).
func (s *Semaphore) unmade() bool { return s == nil || s.line == nil }

// part is one lease of s as a part of a MultiLock; a MultiLock holds one
// lease of the semaphore at a time.
func (s *Semaphore) part() hold.Part {
	if s.unmade() {
		return hold.Part{}
	}
	return hold.Part{Path: s.path, Key: s,
		Acquire: func(ctx context.Context) (*hold.Hold, error) {
			l, err := s.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return l.h, nil
		},
		Release: s.line.Release, Stands: s.line.Stands}
}
