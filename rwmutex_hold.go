package zklock

import (
	"context"
	"errors"
	"sync"
)

// Unlock undoes one Lock. When the write count drops to zero it deletes the
// write node, retrying through connection loss until the delete succeeds,
// ctx ends (then the lock is still held, its bound and revocation watch
// still apply, and Unlock may be called again), or ownership is lost. A
// read lock taken by downgrading stays held, and the write node's deletion
// is not announced (see WithListingHandoff): the read node still blocks
// the writers behind. It returns
// ErrNotLocked if the handle does not hold the write lock and ErrLockLost if
// Lost fired before the release.
func (m *RWMutex) Unlock(ctx context.Context) error {
	return m.unlock(ctx, &m.w)
}

// RUnlock undoes one RLock, as Unlock does for Lock.
func (m *RWMutex) RUnlock(ctx context.Context) error {
	return m.unlock(ctx, &m.r)
}

func (m *RWMutex) unlock(ctx context.Context, from *hold) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	switch {
	case from.n == 0:
		return ErrNotLocked
	case from.n > 1:
		from.n--
		return nil
	}
	release := m.wq.Release
	if from == &m.w && m.r.n > 0 {
		// Downgraded: the read node stays and blocks the writers behind
		// ours, so our deletion must not read as a writer's release.
		release = m.wq.Leave
	}
	err := from.acq.release(ctx, release)
	if err == nil || errors.Is(err, ErrLockLost) {
		m.s.released(from.acq.h)
		*from = hold{}
	}
	return err
}

// current is the acquisition the accessors report: the write lock's while
// it is held, else the read lock's. m.mu must be held.
func (m *RWMutex) current() acquisition {
	if m.w.n > 0 {
		return m.w.acq
	}
	return m.r.acq
}

// Lost returns a channel that is closed when ownership of the current
// acquisition (write or read) may have ended, as Mutex.Lost. It is closed
// when nothing is held. A downgraded read lock shares its write lock's
// session epoch, and its bound (WithMaxHold), so both are lost together.
func (m *RWMutex) Lost() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current().lost()
}

// Revoked is Mutex.Revoked for the current acquisition (write or read) of
// a revocable RWMutex (see WithRevocable).
func (m *RWMutex) Revoked() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current().revoked()
}

// Token returns the fencing token (see Mutex.Token) of the write lock
// while it is held, else of the read lock, or 0 when nothing is held.
// Write tokens strictly increase over successive write acquisitions.
func (m *RWMutex) Token() int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current().token()
}

// Guard returns a ZooKeeper check operation that succeeds only while the
// node behind Token exists (see Mutex.Guard), or nil when nothing is held.
func (m *RWMutex) Guard() *CheckOp {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current().guard()
}

// Node returns the full path of the node behind Token, or "".
func (m *RWMutex) Node() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.current().path()
}

// Contenders lists the queue: readers and writers in one order, holders
// first. Kind is "__READ__" or "__WRIT__".
func (m *RWMutex) Contenders(ctx context.Context) ([]Contender, error) {
	return listContenders(ctx, &m.wq)
}

// RLocker returns a sync.Locker whose Lock and Unlock call m's RLock and
// RUnlock with context.Background(). They panic on error (for example a
// closed session), as sync.Locker has no way to report one.
func (m *RWMutex) RLocker() sync.Locker { return rlocker{m} }

type rlocker struct{ m *RWMutex }

var _ sync.Locker = rlocker{}

func (l rlocker) Lock()   { must(l.m.RLock(context.Background())) }
func (l rlocker) Unlock() { must(l.m.RUnlock(context.Background())) }

// Locker returns a sync.Locker whose Lock and Unlock take and release the
// write lock with context.Background(). They panic on error (for example a
// closed session, or ErrUpgrade while the handle holds only the read lock),
// as sync.Locker has no way to report one.
func (m *RWMutex) Locker() sync.Locker { return wlocker{m} }

type wlocker struct{ m *RWMutex }

var _ sync.Locker = wlocker{}

func (l wlocker) Lock()   { must(l.m.Lock(context.Background())) }
func (l wlocker) Unlock() { must(l.m.Unlock(context.Background())) }
