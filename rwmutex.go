package zklock

import (
	"context"
	"sync"

	"github.com/zklock/zklock/internal/queue"
)

// RWMutex is a distributed reader/writer lock over ZooKeeper: any number of
// readers, or one writer, across all processes using the same path.
//
// Nodes are named like Apache Curator's InterProcessReadWriteLock
// (_c_<uuid>-__READ__<seq> and _c_<uuid>-__WRIT__<seq>) and ordered by one
// sequence, so Curator processes can share the path. Other kinds of
// primitive cannot: a Mutex's lock- nodes or a Semaphore's children on the
// path make every acquisition fail at once with ErrWrongKind.
//
// Fairness: owners are granted in the order they enqueued. A writer waits
// for every earlier node, and watches only the one directly ahead of it. A
// reader waits only for earlier writers, and watches only the nearest one:
// readers that arrive after a waiting writer queue behind it, so a stream of
// readers cannot starve writers. A release wakes only the owners it
// unblocks.
//
// An RWMutex is one owner, reentrant for both modes: Lock while holding the
// write lock, or RLock while holding the read lock, only counts, and each
// needs its own Unlock or RUnlock; no server request is made until the count
// drops to zero. Two goroutines that must exclude each other need two
// RWMutex values, exactly as two processes would. Methods are safe for
// concurrent use, but an owner's acquisitions are meant to be sequential: a
// call that would start one while another is in progress on the same handle
// returns ErrAlreadyLocked. An RWMutex must not be copied.
//
// Downgrade: RLock while holding the write lock succeeds at once and no
// writer can get in between; Unlock then leaves the read lock held. Upgrade
// is refused: Lock while holding only the read lock returns ErrUpgrade at
// once, since two readers upgrading together would deadlock.
//
// Holding is not guaranteed once Lost fires: the session may have expired
// and another client may hold the lock. Guard writes with Token or Guard.
type RWMutex struct {
	s    *Session
	rq   queue.Queue // reader queue
	wq   queue.Queue // writer queue (same path and order)
	data []byte
	o    primitiveOptions // WithRevocable, WithMaxHold

	mu   sync.Mutex
	busy bool // an acquisition is in progress
	r, w hold
}

// hold is one mode's acquisition and its reentrancy count.
type hold struct {
	acq acquisition
	n   int
}

var rwKinds = []string{queue.KindRead, queue.KindWrite}

// NewRWMutex returns an RWMutex on path. Nothing is sent to the server until
// an acquisition. The path rules are NewMutex's.
func NewRWMutex(s *Session, path string, opts ...Option) (*RWMutex, error) {
	wq, o, err := newQueue(s, path, queue.KindWrite, rwKinds, opts)
	if err != nil {
		return nil, err
	}
	if o.cohort != nil {
		return nil, invalid("WithCohort applies to Mutex and ReentrantMutex only")
	}
	rq := wq
	rq.Kind = queue.KindRead
	return &RWMutex{s: s, rq: rq, wq: wq, data: o.data, o: o}, nil
}

// Lock blocks until the write lock is held, ctx ends, or the session is
// closed. If the handle holds the write lock it only counts; if it holds
// only the read lock it returns ErrUpgrade. On error nothing is left on the
// server, and errors.Is(err, ctx.Err()) holds when ctx ended; Lock returns
// within the cleanup grace of ctx's end (see Cleanup in the package doc).
// If the session expires while Lock waits, it re-enqueues under the new
// session. A path that holds another kind of primitive's nodes (a Mutex's,
// an Election's, a Semaphore's) returns a *WrongKindError (wrapping
// ErrWrongKind) at once, without waiting.
func (m *RWMutex) Lock(ctx context.Context) error { return m.lock(ctx, false) }

// TryLock is Lock without waiting: when other owners hold the lock or are
// queued ahead, it returns a *LockedError (wrapping ErrLocked) and leaves
// nothing behind. It returns a *WrongKindError as Lock does.
func (m *RWMutex) TryLock(ctx context.Context) error { return m.lock(ctx, true) }

func (m *RWMutex) lock(ctx context.Context, try bool) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	switch {
	case m.w.n > 0:
		m.w.n++
		m.mu.Unlock()
		return nil
	case m.r.n > 0:
		m.mu.Unlock()
		return ErrUpgrade
	}
	return m.acquire(ctx, &m.wq, &m.w, nil, try)
}

// RLock blocks until the read lock is held, ctx ends, or the session is
// closed. If the handle holds the read lock it only counts. If it holds the
// write lock, it downgrades: the read lock is granted at once, beside the
// write lock's place in the queue, so no waiting writer can get in between
// (one server request). Errors are as for Lock.
func (m *RWMutex) RLock(ctx context.Context) error { return m.rlock(ctx, false) }

// TryRLock is RLock without waiting: when a writer holds the lock or is
// queued, it returns a *LockedError (wrapping ErrLocked) and leaves nothing
// behind. It returns a *WrongKindError as Lock does.
func (m *RWMutex) TryRLock(ctx context.Context) error { return m.rlock(ctx, true) }

func (m *RWMutex) rlock(ctx context.Context, try bool) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	switch {
	case m.r.n > 0:
		m.r.n++
		m.mu.Unlock()
		return nil
	case m.w.n > 0:
		defer m.mu.Unlock()
		return m.downgrade(ctx)
	}
	return m.acquire(ctx, &m.rq, &m.r, writer, try)
}

// downgrade takes the read lock beside our write node. m.mu stays held so
// that Unlock cannot delete the write node before the read node exists:
// a writer could get in between.
func (m *RWMutex) downgrade(ctx context.Context) error {
	if m.busy {
		return ErrAlreadyLocked
	}
	start := m.s.now()
	h, err := m.rq.Join(ctx, m.w.acq.h, m.data)
	err = mapQueueErr(err)
	m.s.acquired(KindRWMutexRead, m.rq.Dir, start, h, err)
	if err != nil {
		return err
	}
	m.r = hold{acquisition{h: h}, 1}
	return nil
}

// acquire enqueues on q and records the grant in to. m.mu is held on entry
// and released on return.
func (m *RWMutex) acquire(ctx context.Context, q *queue.Queue, to *hold, b queue.Blocks, try bool) error {
	if m.busy {
		m.mu.Unlock()
		return ErrAlreadyLocked
	}
	m.busy = true
	m.mu.Unlock()
	start := m.s.now()
	h, err := q.Acquire(ctx, queue.Request{Data: m.data, Blocks: b, Try: try})
	err = mapQueueErr(err)
	kind := KindRWMutexRead
	if q.Kind == queue.KindWrite {
		kind = KindRWMutexWrite
	}
	m.s.acquired(kind, q.Dir, start, h, err)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.busy = false
	if err != nil {
		return err
	}
	*to = hold{acquisition{h: h, w: watchHold(q, h, m.o, holdEvents{m.s, kind, q.Dir})}, 1}
	return nil
}

// writer is the reader's rule: a reader waits for the nearest writer ahead
// of it only, and holds when no writer is ahead: readers never wait for
// readers, nor for anything queued after them (Kazoo #649).
func writer(c queue.Contender) bool { return c.Kind == queue.KindWrite }
