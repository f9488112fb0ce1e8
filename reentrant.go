package zklock

import (
	"bytes"
	"context"
	"sync"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// ReentrantMutex is a distributed lock that its owner may lock again while
// holding it; each Lock must be matched by an Unlock, and the lock is
// released when the count returns to zero. Re-entry costs one round trip:
// the owner's node is looked at (a stat), since a node deleted by another
// client (Break) fires no loss signal, and a rival may hold by then.
//
// Ownership is explicit: a ReentrantMutex value is one owner. Go has no
// thread identity to key counts on (Curator keys them by thread), so give
// each goroutine, request or task that must exclude the others its own
// ReentrantMutex from NewReentrantMutex; two owners exclude each other
// exactly as two processes do, in FIFO order over the same queue as Mutex.
//
// Misuse is reported, never ignored: Unlock on an owner that holds nothing
// returns ErrNotOwner when another owner of the same Session holds the path
// and ErrNotLocked otherwise (including more unlocks than locks).
//
// Methods are safe for concurrent use. A Lock that starts while the
// owner's first is still waiting waits for it, then counts. A
// ReentrantMutex must not be copied, nor used unless NewReentrantMutex
// made it (else ErrInvalidArgument). Lost, Token and Guard behave as on
// Mutex.
type ReentrantMutex struct {
	s    *Session
	q    *queue.Queue
	data []byte
	h    hold.Slot

	mu     sync.Mutex
	count  int
	taking chan struct{} // closed when the owner's first Lock in flight returns
}

var reentrantSpec = spec{kind: KindReentrantMutex, node: queue.KindLock, accept: lockKinds, takes: lockTakes}

// NewReentrantMutex returns a new owner of the reentrant lock at path. It
// takes the same options as NewMutex and uses the same wire names, so
// ReentrantMutex, Mutex and Curator's InterProcessMutex owners on one path
// exclude each other.
func NewReentrantMutex(s *Session, path string, opts ...Option) (*ReentrantMutex, error) {
	q, o, err := build(s, path, reentrantSpec, opts)
	if err != nil {
		return nil, err
	}
	_, a := s.line(q, q, reentrantSpec, o)
	return &ReentrantMutex{s: s, q: q, data: o.data, h: hold.Slot{A: a}}, nil
}

// Lock acquires the lock, or increments the hold count if this owner holds
// it already; a Lock of the owner's still in flight is waited for first.
// It returns ErrLockLost, without changing the count, if the owner holds a
// lock whose loss signal has fired or whose node is gone (Break): release
// it first. Otherwise it behaves
// as Mutex.Lock, refusing a path that holds another kind of primitive's
// nodes with ErrWrongKind.
func (r *ReentrantMutex) Lock(ctx context.Context) error {
	if r.unmade() {
		return unmade("ReentrantMutex", "NewReentrantMutex")
	}
	return named(ctx, "lock", r.q.Dir, r.lock(ctx, false))
}

// TryLock is Lock that fails with a *LockedError (wrapping ErrLocked) rather
// than wait for another owner, or for the owner's own first Lock still in
// flight (the lock is not the owner's until that returns).
func (r *ReentrantMutex) TryLock(ctx context.Context) error {
	if r.unmade() {
		return unmade("ReentrantMutex", "NewReentrantMutex")
	}
	return named(ctx, "lock", r.q.Dir, r.lock(ctx, true))
}

func (r *ReentrantMutex) lock(ctx context.Context, try bool) error {
	if err := hold.CheckCtx(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	for {
		for r.count == 0 && r.taking != nil && !try {
			taking := r.taking
			r.mu.Unlock()
			select {
			case <-taking:
			case <-ctx.Done():
				return ctx.Err()
			}
			r.mu.Lock()
		}
		if r.count == 0 && r.taking != nil && try {
			// A TryLock beside the owner's first acquisition in flight:
			// that one may be granted first, so this one must not put a
			// second node of the owner's on the server (granted first, it
			// would leave the first behind the owner's own node, waiting
			// for the owner). The lock is not the owner's yet: refused, as
			// by another owner of this process (a cohort's refusal too).
			r.mu.Unlock()
			return &errs.LockedError{Data: bytes.Clone(r.data)}
		}
		if r.count == 0 {
			break
		}
		if again, err := r.reenter(ctx); !again {
			return err
		}
	}
	// This call is the owner's first acquisition in flight, which later
	// Locks wait for and TryLocks are refused beside.
	taking := make(chan struct{})
	r.taking = taking
	r.mu.Unlock()
	err := r.h.Lock(ctx, queue.Request{Data: r.data, Try: try})
	r.mu.Lock()
	defer r.mu.Unlock()
	close(taking)
	r.taking = nil
	if err == nil {
		r.count = 1
		r.s.owners.Store(r.q.Dir, r)
	}
	return err
}

// reenter counts one more Lock of the owner's hold, once the slot has
// confirmed it on the server (hold.Slot.Confirm: its node stands, one
// round trip), off r.mu. It is called and returns with r.mu held; again
// reports that the hold was released meanwhile (an Unlock of the owner's
// on another goroutine), so the caller locks anew; else err is the call's
// result, r.mu released.
func (r *ReentrantMutex) reenter(ctx context.Context) (again bool, err error) {
	h := r.h.Current()
	r.mu.Unlock()
	err = r.h.Confirm(ctx, h)
	r.mu.Lock()
	switch {
	case r.count == 0 || r.h.Current() != h:
		return true, nil
	case err == nil:
		r.count++
	}
	r.mu.Unlock()
	return false, err
}

// Unlock decrements the hold count and releases the lock when it reaches
// zero, as Mutex.Unlock does: once that release began, the count is zero
// whatever its outcome (a release cut off by ctx gives the hold up, see
// Mutex.Unlock), and the owner's next Lock acquires anew.
func (r *ReentrantMutex) Unlock(ctx context.Context) error {
	if r.unmade() {
		return unmade("ReentrantMutex", "NewReentrantMutex")
	}
	return named(ctx, "unlock", r.q.Dir, r.unlock(ctx))
}

func (r *ReentrantMutex) unlock(ctx context.Context) error {
	if err := hold.CheckCtx(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.count == 0:
		if o, ok := r.s.owners.Load(r.q.Dir); ok && o != r {
			return ErrNotOwner
		}
		return ErrNotLocked
	case r.count > 1:
		r.count--
		return nil
	}
	h := r.h.Current()
	err := r.h.Unlock(ctx)
	if h == nil || h.Released() { // given back, lost, or cut off
		r.count = 0
		r.s.owners.CompareAndDelete(r.q.Dir, r)
	}
	return err
}

// holdCount is how many times the owner has locked without unlocking.
func (r *ReentrantMutex) holdCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Lost is Mutex.Lost for this owner's acquisition.
func (r *ReentrantMutex) Lost() <-chan struct{} { return r.current().Lost() }

// Token is Mutex.Token for this owner's acquisition.
func (r *ReentrantMutex) Token() int64 { return r.current().Token() }

// Guard is Mutex.Guard for this owner's acquisition.
func (r *ReentrantMutex) Guard() *zk.CheckOp { return checkOp(r.current().Guard()) }

// current is the hold the accessors describe; nil (nothing held) for a
// nil *ReentrantMutex, as for a zero one.
func (r *ReentrantMutex) current() *hold.Hold {
	if r == nil {
		return nil
	}
	return r.h.Current()
}

// unmade reports that NewReentrantMutex did not make r (unmade).
func (r *ReentrantMutex) unmade() bool { return r == nil || r.q == nil }

func (r *ReentrantMutex) part() hold.Part {
	if r.unmade() {
		return hold.Part{}
	}
	return hold.Part{Path: r.q.Dir, Key: r,
		Acquire: func(ctx context.Context) (*hold.Hold, error) {
			if err := r.Lock(ctx); err != nil {
				return nil, err
			}
			return r.h.Current(), nil // the owner's hold, while it counts
		},
		Release: func(ctx context.Context, _ *hold.Hold) error { return r.Unlock(ctx) },
		Stands:  r.h.Stands}
}
