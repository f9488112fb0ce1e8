package zklock

import (
	"context"

	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// Mutex is a distributed mutual exclusion lock over ZooKeeper: at most one
// Mutex, across all processes and machines using the same path, holds it.
//
// A Mutex behaves like sync.Mutex across goroutines too: any number of
// goroutines may share one, and Lock blocks while it is held, by this
// handle or another, until Unlock. Each Lock is an acquisition of its own,
// with its own fencing token, queued in the order the calls reach the
// session. Any goroutine may Unlock, as with sync.Mutex. The accessors
// (Lost, Token, Guard) describe the current holder's
// acquisition. It is not reentrant: a goroutine that calls Lock while it
// holds waits forever, as with sync.Mutex (use ReentrantMutex for nesting).
// Methods are safe for concurrent use; a Mutex must not be copied. Those
// of a zero or nil Mutex return ErrInvalidArgument: NewMutex makes one.
//
// Fairness: contenders are granted in the order they enqueued (their node's
// sequence number); each watches only the node directly ahead of it, so a
// release wakes exactly one waiter.
//
// A Mutex, a ReentrantMutex, an Election, Curator's InterProcessMutex and
// Kazoo's Lock share one queue on a path (docs/interop.md). Use one kind of
// primitive per path: Lock and TryLock refuse a path holding another kind's
// nodes (an RWMutex's, a Semaphore's) with ErrWrongKind. WithSequenceLayout
// gives a Mutex zklock's own layout, for long queues, shared only by such
// Mutexes.
//
// Holding is not guaranteed once Lost fires: the session may have expired
// and another client may hold the lock. Stop using the resource then, and
// guard writes with Token or Guard so a resource can reject a stale holder.
type Mutex struct {
	q queue.Queue // its own: a held lock is one allocation less
	l hold.Line   // the line h acquires through (or through a cohort); its Data is our nodes'
	h hold.Slot
}

// mutexSpec describes a Mutex to the engine.
var mutexSpec = spec{kind: KindMutex, node: queue.KindLock, accept: lockKinds, takes: lockTakes | takesSeq}

// NewMutex returns a Mutex on path. Nothing is sent to the server until
// Lock. The path must be a valid absolute ZooKeeper path outside /zookeeper
// (else ErrInvalidArgument); its missing parents are created as CONTAINER
// nodes, which the server removes once empty. A path, or node data with
// the path, that would make a create request larger than the servers
// accept (see WithMaxRequestSize) returns ErrInvalidArgument or
// ErrInvalidArgument: such a request is never sent.
func NewMutex(s *Session, path string, opts ...Option) (*Mutex, error) {
	return newMutex(s, path, mutexSpec, opts)
}

func newMutex(s *Session, path string, sp spec, opts []Option) (*Mutex, error) {
	q, o, err := buildQueue(s, path, sp, opts)
	if err != nil {
		return nil, err
	}
	m := &Mutex{q: q}
	var p hold.Protocol = &m.q
	if o.seqLayout {
		p = &queue.Seq{Q: &m.q} // its rules are the sequence layout's (rules)
	}
	m.h.A = s.lineAt(&m.l, &m.q, p, sp, o)
	return m, nil
}

// Lock blocks until the lock is held, ctx ends, or the session is closed.
// While the Mutex is held, by this handle or another, it waits for Unlock.
// On error nothing is left on the server: the returned error names the
// path and satisfies errors.Is(err, ctx.Err()) when ctx ended (so do the
// other primitives' acquisitions), and Lock returns within the
// cleanup grace of ctx's end (see Cleanup in the package doc). If the
// session expires while Lock waits, it re-enqueues under the new session.
// It returns a *WrongKindError (wrapping ErrWrongKind) at once, without
// waiting, when the path holds another kind of primitive's nodes, such as
// an RWMutex's or a Semaphore's; that costs no extra request.
func (m *Mutex) Lock(ctx context.Context) error {
	if m.unmade() {
		return unmade("Mutex", "NewMutex")
	}
	return named(ctx, "lock", m.q.Dir, m.h.Lock(ctx, queue.Request{Data: m.l.Data}))
}

// TryLock acquires the lock if no other owner holds it or waits for it, and
// otherwise returns a *LockedError (wrapping ErrLocked) naming the holder
// (the Mutex's own acquisition when it holds), or a *WrongKindError as
// Lock does. When granted it takes one round trip (the listing is
// pipelined behind the create); when refused, three (the holder's data is
// read for the error, and our node is deleted), and it leaves nothing
// behind.
func (m *Mutex) TryLock(ctx context.Context) error {
	if m.unmade() {
		return unmade("Mutex", "NewMutex")
	}
	return named(ctx, "lock", m.q.Dir, m.h.Lock(ctx, queue.Request{Data: m.l.Data, Try: true}))
}

// Unlock releases the lock by deleting our node, retrying through connection
// loss until the delete succeeds, ctx ends, or ownership is lost. It
// returns ErrNotLocked if the Mutex does not hold the lock and ErrLockLost
// if Lost fired before the release (WithSequenceLayout: or if its node is
// gone, deleting nothing; see there). If ctx ends while the delete is under
// way, Unlock cannot know whether it reached the server (a rival may hold
// by now), so the acquisition is over all the same: Unlock returns an
// error for which errors.Is(err, ctx.Err()) holds, Lost is closed, the
// node is deleted in the background (until it is gone or the session is),
// and a second Unlock returns ErrNotLocked. A ctx that ended before Unlock
// was called changes nothing. In every case the Mutex may Lock again,
// with a new node.
func (m *Mutex) Unlock(ctx context.Context) error {
	if m.unmade() {
		return unmade("Mutex", "NewMutex")
	}
	return named(ctx, "unlock", m.q.Dir, m.h.Unlock(ctx))
}

// Lost returns a channel that is closed when ownership of the current
// acquisition may have ended: at the session's ownership deadline (see
// Session.OwnershipDeadline) or on expiry, before the server can grant the
// lock to another client, or at its bound (WithMaxHold). It never reopens;
// a later Lock has its own. It is closed when nothing is held.
func (m *Mutex) Lost() <-chan struct{} { return m.current().Lost() }

// Token returns the fencing token of the current acquisition, or 0 when
// nothing is held. A token is the lock node's creation zxid shifted left
// by 12 bits, plus the index of the grant among the node's local grants
// (always 0 without WithCohort): tokens strictly increase over successive
// acquisitions of the same path, by any process, even when the path's
// parent node was reaped and re-created, and over a cohort's local
// handoffs. Every zklock primitive makes its tokens this way, so tokens of
// zklock processes with and without cohorting compare.
func (m *Mutex) Token() int64 { return m.current().Token() }

// Guard returns a ZooKeeper check operation that succeeds only while this
// acquisition holds: its node exists (with WithCohort, and no later local
// holder took over). Put it first in zk.Client.Multi so the other writes
// commit only while the lock is held. Its Path is our lock node's. It
// returns nil when the Mutex holds nothing (before Lock, after Unlock).
// After the loss signal fired and until Unlock it still names the node:
// the check then fails once the node is gone, which is when a rival can
// hold. WithSequenceLayout: always nil (Multi refuses it), as a node of a
// reaped path's earlier life may briefly have its node's name; fence with
// Token.
func (m *Mutex) Guard() *zk.CheckOp { return checkOp(m.current().Guard()) }

// unmade reports that NewMutex did not make m (unmade).
func (m *Mutex) unmade() bool { return m == nil || m.h.A == nil }

// current is the slot's hold; nil (nothing held) for a nil Mutex.
func (m *Mutex) current() *hold.Hold {
	if m == nil {
		return nil
	}
	return m.h.Current()
}

func (m *Mutex) part() hold.Part {
	if m.unmade() {
		return hold.Part{}
	}
	return slotPart(m.q.Dir, m, &m.h, m.l.Data)
}
