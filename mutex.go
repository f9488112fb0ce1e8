package zklock

import (
	"context"
	"errors"
	"sync"

	"github.com/zklock/zklock/internal/queue"
)

// Mutex is a distributed mutual exclusion lock over ZooKeeper: at most one
// Mutex, across all processes and machines using the same path, holds it.
//
// Fairness: contenders are granted in the order they enqueued (their node's
// sequence number). Each waiter watches only the node directly ahead of it,
// so a release wakes exactly one waiter (no herd effect).
//
// A Mutex is one owner. It is not reentrant: Lock while it holds returns
// ErrAlreadyLocked (use ReentrantMutex for nesting). Two goroutines that must
// exclude each other need two Mutex values, exactly as two processes would.
// Methods are safe for concurrent use; a Mutex must not be copied.
//
// Only contenders of the same layout share a queue: a Mutex, a
// ReentrantMutex, an Election, Curator's InterProcessMutex and Kazoo's Lock
// (lock- and __lock__ nodes) exclude each other on one path, but an RWMutex
// or a Semaphore on the same path would not. Use one kind of primitive per
// path: Lock and TryLock refuse a path that holds another kind's nodes
// with ErrWrongKind (see there).
//
// Holding is not guaranteed once Lost fires: the session may have expired
// and another client may hold the lock. Stop using the protected resource
// then, and guard writes with Token or Guard so a resource can reject a
// stale holder.
type Mutex struct {
	s    *Session
	q    queue.Queue
	data []byte
	kind string           // for Metrics
	co   *cohortBound     // WithCohort
	o    primitiveOptions // WithRevocable, WithMaxHold

	mu        sync.Mutex
	acquiring bool
	acq       acquisition
}

// NewMutex returns a Mutex on path. Nothing is sent to the server until
// Lock. The path must be a valid absolute ZooKeeper path outside /zookeeper
// (else ErrInvalidPath); its missing parents are created as CONTAINER
// nodes, which the server removes once empty. A path, or node data with
// the path, that would make a create request larger than the servers
// accept (see WithMaxRequestSize) returns ErrInvalidPath or
// ErrDataTooLarge: such a request is never sent.
func NewMutex(s *Session, path string, opts ...Option) (*Mutex, error) {
	q, o, err := newQueue(s, path, queue.KindLock, []string{queue.KindLock, queue.KindKazooLock}, opts)
	if err != nil {
		return nil, err
	}
	return &Mutex{s: s, q: q, data: o.data, kind: KindMutex, co: o.cohort, o: o}, nil
}

// Lock blocks until the lock is held, ctx ends, or the session is closed. On
// error nothing is left on the server: the returned error satisfies
// errors.Is(err, ctx.Err()) when ctx ended, and Lock returns within the
// cleanup grace of ctx's end (see Cleanup in the package doc). If the
// session expires while Lock waits, it re-enqueues under the new session.
// It returns a *WrongKindError (wrapping ErrWrongKind) at once, without
// waiting, when the path holds another kind of primitive's nodes, such as
// an RWMutex's or a Semaphore's; that costs no extra request.
func (m *Mutex) Lock(ctx context.Context) error { return m.lock(ctx, false) }

// TryLock acquires the lock if no other owner holds it or waits for it, and
// otherwise returns a *LockedError (wrapping ErrLocked) naming the holder,
// or a *WrongKindError as Lock does. When granted it takes one round trip
// (the listing is pipelined behind the create); when refused, three (the
// holder's data is read for the error, and our node is deleted), and it
// leaves nothing behind.
func (m *Mutex) TryLock(ctx context.Context) error { return m.lock(ctx, true) }

func (m *Mutex) lock(ctx context.Context, try bool) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	if m.acquiring || m.acq.h != nil {
		m.mu.Unlock()
		return ErrAlreadyLocked
	}
	m.acquiring = true
	m.mu.Unlock()

	start := m.s.now()
	var a acquisition
	var err error
	if m.co != nil {
		a, err = m.lockCohort(ctx, try)
	} else {
		a.h, err = m.q.Acquire(ctx, queue.Request{Data: m.data, Try: try})
		err = mapQueueErr(err)
		if m.o.revocable || m.o.maxHold > 0 {
			a.w = watchHold(&m.q, a.h, m.o, holdEvents{m.s, m.kind, m.q.Dir})
		}
	}
	m.s.acquired(m.kind, m.q.Dir, start, a.h, err)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acquiring = false
	if err != nil {
		return err
	}
	m.acq = a
	return nil
}

// lockCohort acquires through m's cohort (WithCohort).
func (m *Mutex) lockCohort(ctx context.Context, try bool) (acquisition, error) {
	c := m.s.cohorts.join(m)
	g, err := c.lock(ctx, m, try)
	if err != nil {
		m.s.cohorts.leave(c)
		return acquisition{}, err
	}
	return acquisition{h: g.h, local: g.local, c: c}, nil
}

// Unlock releases the lock by deleting our node, retrying through connection
// loss until the delete succeeds, ctx ends (then the lock is still held, its
// bound and revocation watch still apply, and Unlock may be called again),
// or ownership is lost. It returns ErrNotLocked if the Mutex does not hold
// the lock and ErrLockLost if Lost fired before the release (with
// WithCohort, also if the cohort saw its node deleted by another client:
// see WithCohort); in both cases the Mutex may Lock again.
func (m *Mutex) Unlock(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acq.h == nil {
		return ErrNotLocked
	}
	var err error
	if c := m.acq.c; c != nil {
		err = c.unlock(ctx, m, m.acq.lost())
	} else {
		err = m.acq.release(ctx, m.q.Release)
	}
	if err == nil || errors.Is(err, ErrLockLost) {
		m.s.released(m.acq.h)
		if m.acq.c != nil {
			m.s.cohorts.leave(m.acq.c)
		}
		m.acq = acquisition{}
	}
	return err
}

// Lost returns a channel that is closed when ownership of the current
// acquisition may have ended: at the session's ownership deadline (see
// Session.OwnershipDeadline) or on expiry, before the server can grant the
// lock to another client. It never reopens; a later Lock has its own. It is
// closed when nothing is held.
func (m *Mutex) Lost() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acq.lost()
}

// Revoked returns a channel that is closed when a revocation request (see
// Revoke) arrives for the current acquisition of a revocable Mutex (see
// WithRevocable): someone asks the holder to release. The holder decides;
// nothing is taken from it. It returns nil, a channel that never closes,
// when the Mutex is not revocable or holds nothing.
func (m *Mutex) Revoked() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acq.revoked()
}

// Token returns the fencing token of the current acquisition, or 0 when
// nothing is held. A token is the lock node's creation zxid shifted left
// by 12 bits, plus the index of the grant among the node's local grants
// (always 0 without WithCohort): tokens strictly increase over successive
// acquisitions of the same path, by any process, even when the path's
// parent node was reaped and re-created, and over a cohort's local
// handoffs. Every zklock primitive makes its tokens this way, so tokens of
// zklock processes with and without cohorting compare.
func (m *Mutex) Token() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acq.token()
}

// Guard returns a ZooKeeper check operation that succeeds only while this
// acquisition's node exists. Put it first in Session.Multi so the other
// writes commit only while the lock is held. It returns nil when nothing is
// held (Session.Multi refuses a nil op).
func (m *Mutex) Guard() *CheckOp {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.acq.c != nil {
		return m.acq.c.guard(m, m.acq.h.Path)
	}
	return m.acq.guard()
}

// Node returns the full path of our lock node, or "" when nothing is held.
func (m *Mutex) Node() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.acq.path()
}

// Contenders lists the lock's queue: the holder first, then the waiters in
// the order they will be granted, each with its node data.
func (m *Mutex) Contenders(ctx context.Context) ([]Contender, error) {
	return listContenders(ctx, &m.q)
}

// Locker returns a sync.Locker whose Lock and Unlock call m's with
// context.Background(). They panic on error (for example a closed session),
// as sync.Locker has no way to report one.
func (m *Mutex) Locker() sync.Locker { return locker{m} }

type locker struct{ m *Mutex }

var _ sync.Locker = locker{}

func (l locker) Lock()   { must(l.m.Lock(context.Background())) }
func (l locker) Unlock() { must(l.m.Unlock(context.Background())) }

// must panics with err, for the sync.Locker adapters, which cannot return
// it.
func must(err error) {
	if err != nil {
		panic(err)
	}
}
