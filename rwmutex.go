package zklock

import (
	"context"
	"slices"
	"sync"

	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// RWMutex is a distributed reader/writer lock over ZooKeeper: any number of
// readers, or one writer, across all processes using the same path.
//
// Like sync.RWMutex, an RWMutex may be shared by any number of goroutines:
// Lock blocks while it is read- or write-locked, by this handle or another,
// and RLock while it is write-locked or a writer waits ahead; each Lock and
// RLock is an acquisition of its own, with its own fencing token. It is not
// reentrant: a goroutine that holds a read lock and calls Lock waits
// forever. Any goroutine may Unlock or RUnlock. Lost, Token and Guard
// describe the write lock while it is held, else the handle's oldest read
// lock. Methods are safe for concurrent use; an RWMutex must not be copied,
// nor used unless NewRWMutex made it (else ErrInvalidArgument).
//
// Fairness: owners are granted in the order they enqueued; a reader waits
// only for earlier writers, so readers that arrive after a waiting writer
// queue behind it and cannot starve writers. Downgrade adds a read lock to
// the write lock, with no writer getting in between (see there).
//
// Curator's InterProcessReadWriteLock can share the path (docs/interop.md);
// another kind of primitive's nodes on it make every acquisition fail at
// once with ErrWrongKind. Holding is not guaranteed once Lost fires
// (another client may hold): guard writes with Token or Guard.
type RWMutex struct {
	q, rq *queue.Queue // the write and the read queue (one path, one order)
	rl    *hold.Line   // the read line
	data  []byte
	w     hold.Slot // the write lock

	mu    sync.Mutex
	reads []*hold.Hold // read holds, oldest first
}

var (
	rwKinds     = []string{queue.KindRead, queue.KindWrite}
	rwWriteSpec = spec{kind: KindRWMutexWrite, node: queue.KindWrite, accept: rwKinds, takes: takesRevocable | takesMaxHold}
	rwReadSpec  = spec{kind: KindRWMutexRead, node: queue.KindRead, accept: rwKinds, takes: takesRevocable | takesMaxHold}
)

// NewRWMutex returns an RWMutex on path; see NewMutex for the path and
// the options it takes (WithCohort is refused).
func NewRWMutex(s *Session, path string, opts ...Option) (*RWMutex, error) {
	q, o, err := build(s, path, rwWriteSpec, opts)
	if err != nil {
		return nil, err
	}
	rq := *q
	rq.Rules = rules(rwReadSpec, o)
	wl, _ := s.line(q, q, rwWriteSpec, o)
	rl, _ := s.line(&rq, readQueue{&rq}, rwReadSpec, o)
	return &RWMutex{q: q, rq: &rq, rl: rl, data: o.data, w: hold.Slot{A: wl}}, nil
}

// readQueue is the read protocol: the queue, where only writers ahead
// block a reader.
type readQueue struct{ q *queue.Queue }

func (r readQueue) Take(ctx context.Context, req queue.Request) (*queue.Place, error) {
	req.Blocks = writer
	return r.q.Take(ctx, req)
}

func (r readQueue) Give(ctx context.Context, p *queue.Place) error { return r.q.Give(ctx, p) }

func writer(c queue.Contender) bool { return c.Kind == queue.KindWrite }

// Lock acquires the write lock, waiting while any read or write lock is
// held; otherwise as Mutex.Lock.
func (m *RWMutex) Lock(ctx context.Context) error {
	if m.unmade() {
		return unmade("RWMutex", "NewRWMutex")
	}
	return named(ctx, "lock", m.q.Dir, m.w.Lock(ctx, queue.Request{Data: m.data}))
}

// TryLock is Lock that fails with a *LockedError rather than wait.
func (m *RWMutex) TryLock(ctx context.Context) error {
	if m.unmade() {
		return unmade("RWMutex", "NewRWMutex")
	}
	return named(ctx, "lock", m.q.Dir, m.w.Lock(ctx, queue.Request{Data: m.data, Try: true}))
}

// RLock acquires a read lock, waiting while a writer holds or waits ahead;
// otherwise as Mutex.Lock.
func (m *RWMutex) RLock(ctx context.Context) error {
	if m.unmade() {
		return unmade("RWMutex", "NewRWMutex")
	}
	_, err := m.rlock(ctx, false)
	return named(ctx, "read-lock", m.q.Dir, err)
}

// TryRLock is RLock that fails with a *LockedError rather than wait; when
// what it would wait for is a writer queued ahead, the error names that
// writer (LockedError.Queued).
func (m *RWMutex) TryRLock(ctx context.Context) error {
	if m.unmade() {
		return unmade("RWMutex", "NewRWMutex")
	}
	_, err := m.rlock(ctx, true)
	return named(ctx, "read-lock", m.q.Dir, err)
}

func (m *RWMutex) rlock(ctx context.Context, try bool) (*hold.Hold, error) {
	h, err := m.rl.Acquire(ctx, queue.Request{Data: m.data, Try: try})
	if err != nil {
		return nil, err
	}
	m.mu.Lock()
	m.reads = append(m.reads, h)
	m.mu.Unlock()
	return h, nil
}

// Downgrade takes a read lock beside the write lock this RWMutex holds, at
// its position in the queue, so that no writer gets in between; Unlock then
// releases the write lock and leaves the read lock held. It returns
// ErrNotLocked when the write lock is not held, or an Unlock of it (by
// another goroutine) began first. It relies on the write
// lock, so it succeeds only while that lock is live: once its Lost has
// fired (its bound, WithMaxHold, passed, or its session's ownership ended),
// or its node was deleted by another client (Break), it returns
// ErrLockLost and leaves nothing, since a writer queued behind may hold.
// The read lock so taken keeps what the write lock had: it is revocable
// with WithRevocable, and with WithMaxHold it ends at the write lock's
// bound at the latest. It costs two requests (the read node, then a read
// of the write node). Upgrade has no counterpart: release the read lock,
// then Lock.
func (m *RWMutex) Downgrade(ctx context.Context) error {
	if m.unmade() {
		return unmade("RWMutex", "NewRWMutex")
	}
	return named(ctx, "downgrade", m.q.Dir, m.downgrade(ctx))
}

func (m *RWMutex) downgrade(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err // the argument first, as every blocking method: fix the call
	}
	w := m.w.Current()
	if w == nil {
		return ErrNotLocked
	}
	h, err := m.rl.Downgrade(ctx, w, m.rq, m.data)
	if err != nil {
		return err
	}
	m.mu.Lock()
	m.reads = append(m.reads, h)
	m.mu.Unlock()
	return nil
}

// Unlock releases the write lock, as Mutex.Unlock does. After a Downgrade
// the read lock stays held.
func (m *RWMutex) Unlock(ctx context.Context) error {
	if m.unmade() {
		return unmade("RWMutex", "NewRWMutex")
	}
	return named(ctx, "unlock", m.q.Dir, m.w.Unlock(ctx))
}

// RUnlock releases the oldest read lock of the handle, as Mutex.Unlock
// does; ErrNotLocked when it holds none.
func (m *RWMutex) RUnlock(ctx context.Context) error {
	if m.unmade() {
		return unmade("RWMutex", "NewRWMutex")
	}
	return named(ctx, "read-unlock", m.q.Dir, m.rUnlock(ctx))
}

func (m *RWMutex) rUnlock(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	if len(m.reads) == 0 {
		m.mu.Unlock()
		return ErrNotLocked
	}
	h := m.reads[0]
	m.mu.Unlock()
	return m.runlock(ctx, h)
}

// runlock releases h, a read hold of m's: it leaves m's reads while its
// release is under way, so that a concurrent RUnlock takes another, and
// comes back if it is still held (ctx ended first).
func (m *RWMutex) runlock(ctx context.Context, h *hold.Hold) error {
	m.mu.Lock()
	i := slices.Index(m.reads, h)
	if i < 0 {
		m.mu.Unlock()
		return ErrNotLocked
	}
	m.reads = slices.Delete(m.reads, i, i+1)
	m.mu.Unlock()
	err := m.rl.Release(ctx, h)
	if !h.Released() {
		m.mu.Lock()
		m.reads = slices.Insert(m.reads, 0, h)
		m.mu.Unlock()
	}
	return err
}

// current is the hold the accessors describe: the write lock's, else the
// oldest read lock's.
func (m *RWMutex) current() *hold.Hold {
	if m == nil {
		return nil // nothing held, as for a zero RWMutex
	}
	if h := m.w.Current(); h != nil {
		return h
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if len(m.reads) == 0 {
		return nil
	}
	return m.reads[0]
}

// Lost is Mutex.Lost for the current acquisition (see RWMutex).
func (m *RWMutex) Lost() <-chan struct{} { return m.current().Lost() }

// Token is Mutex.Token for the current acquisition.
func (m *RWMutex) Token() int64 { return m.current().Token() }

// Guard is Mutex.Guard for the current acquisition.
func (m *RWMutex) Guard() *zk.CheckOp { return checkOp(m.current().Guard()) }

// unmade reports that NewRWMutex did not make m (unmade).
func (m *RWMutex) unmade() bool { return m == nil || m.q == nil }

// part is m's write lock as a part of a MultiLock.
func (m *RWMutex) part() hold.Part {
	if m.unmade() {
		return hold.Part{}
	}
	return slotPart(m.q.Dir, m, &m.w, m.data)
}

// ReadPart returns a read lock of m as a part of a MultiLock (m itself is
// its write lock).
func (m *RWMutex) ReadPart() Part { return readPart{m} }

type readPart struct{ m *RWMutex }

func (r readPart) part() hold.Part {
	m := r.m
	if m.unmade() {
		return hold.Part{}
	}
	return hold.Part{Path: m.q.Dir, Key: m,
		Acquire: func(ctx context.Context) (*hold.Hold, error) { return m.rlock(ctx, false) },
		Release: m.runlock, Stands: m.rl.Stands}
}
