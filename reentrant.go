package zklock

import (
	"context"
	"errors"
	"sync"
)

// ReentrantMutex is a distributed lock that its owner may lock again while
// holding it; each Lock must be matched by an Unlock, and the lock is
// released when the count returns to zero. Re-entry costs no ZooKeeper call.
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
// Methods are safe for concurrent use, but a second Lock that starts while
// the owner's first is still waiting returns ErrAlreadyLocked. A
// ReentrantMutex must not be copied. Lost, Token and Guard behave as on
// Mutex.
type ReentrantMutex struct {
	m *Mutex

	mu    sync.Mutex
	count int
}

// NewReentrantMutex returns a new owner of the reentrant lock at path. It
// takes the same options as NewMutex and uses the same wire names, so
// ReentrantMutex, Mutex and Curator's InterProcessMutex owners on one path
// exclude each other.
func NewReentrantMutex(s *Session, path string, opts ...Option) (*ReentrantMutex, error) {
	m, err := NewMutex(s, path, opts...)
	if err != nil {
		return nil, err
	}
	m.kind = KindReentrantMutex
	return &ReentrantMutex{m: m}, nil
}

// Lock acquires the lock, or increments the hold count if this owner holds
// it already. It returns ErrLockLost, without changing the count, if the
// owner holds a lock whose loss signal has fired: release it first.
// Otherwise it behaves as Mutex.Lock, refusing a path that holds another
// kind of primitive's nodes with ErrWrongKind.
func (r *ReentrantMutex) Lock(ctx context.Context) error { return r.lock(ctx, false) }

// TryLock is Lock that fails with a *LockedError (wrapping ErrLocked) rather
// than wait for another owner.
func (r *ReentrantMutex) TryLock(ctx context.Context) error { return r.lock(ctx, true) }

func (r *ReentrantMutex) lock(ctx context.Context, try bool) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if ok, err := r.reenter(); ok || err != nil {
		return err
	}
	if err := r.m.lock(ctx, try); err != nil {
		return err
	}
	r.mu.Lock()
	r.count = 1
	r.mu.Unlock()
	r.m.s.owners.set(r.m.q.Dir, r)
	return nil
}

func (r *ReentrantMutex) reenter() (bool, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.count == 0 {
		return false, nil
	}
	select {
	case <-r.m.Lost():
		return false, ErrLockLost
	default:
	}
	r.count++
	return true, nil
}

// Unlock decrements the hold count and releases the lock when it reaches
// zero, as Mutex.Unlock does. If the release fails because ctx ended, the
// count stays at one and Unlock may be called again.
func (r *ReentrantMutex) Unlock(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	switch {
	case r.count == 0 && r.m.s.owners.get(r.m.q.Dir) != nil:
		return ErrNotOwner
	case r.count == 0:
		return ErrNotLocked
	case r.count > 1:
		r.count--
		return nil
	}
	err := r.m.Unlock(ctx)
	if err == nil || errors.Is(err, ErrLockLost) {
		r.count = 0
		r.m.s.owners.set(r.m.q.Dir, nil)
	}
	return err
}

// Revoked is Mutex.Revoked for this owner's hold (see WithRevocable).
func (r *ReentrantMutex) Revoked() <-chan struct{} { return r.m.Revoked() }

// HoldCount returns how many times the owner has locked without unlocking.
func (r *ReentrantMutex) HoldCount() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.count
}

// Lost is Mutex.Lost for this owner's acquisition.
func (r *ReentrantMutex) Lost() <-chan struct{} { return r.m.Lost() }

// Token is Mutex.Token for this owner's acquisition.
func (r *ReentrantMutex) Token() int64 { return r.m.Token() }

// Guard is Mutex.Guard for this owner's acquisition.
func (r *ReentrantMutex) Guard() *CheckOp { return r.m.Guard() }

// Node returns the full path of our lock node, or "" when nothing is held.
func (r *ReentrantMutex) Node() string { return r.m.Node() }

// Locker returns a sync.Locker whose Lock and Unlock call r's with
// context.Background(), counting holds as r does. They panic on error (for
// example a closed session, or Unlock by a non-owner), as sync.Locker has no
// way to report one.
func (r *ReentrantMutex) Locker() sync.Locker { return reentrantLocker{r} }

type reentrantLocker struct{ r *ReentrantMutex }

var _ sync.Locker = reentrantLocker{}

func (l reentrantLocker) Lock()   { must(l.r.Lock(context.Background())) }
func (l reentrantLocker) Unlock() { must(l.r.Unlock(context.Background())) }

// Contenders lists the lock's queue, holder first.
func (r *ReentrantMutex) Contenders(ctx context.Context) ([]Contender, error) {
	return r.m.Contenders(ctx)
}

// owners records, per Session, which ReentrantMutex holds each path, so that
// Unlock by another owner of the same session is named ErrNotOwner rather
// than ErrNotLocked.
type owners struct {
	mu sync.Mutex
	m  map[string]*ReentrantMutex
}

func (o *owners) set(path string, r *ReentrantMutex) {
	o.mu.Lock()
	defer o.mu.Unlock()
	if r == nil {
		delete(o.m, path)
		return
	}
	if o.m == nil {
		o.m = make(map[string]*ReentrantMutex)
	}
	o.m[path] = r
}

func (o *owners) get(path string) *ReentrantMutex {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.m[path]
}
