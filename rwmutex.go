package zklock

import (
	"context"
	"sync"
	"time"

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
// drops to zero. Re-entry into a hold whose Lost has fired returns
// ErrLockLost and counts nothing, as ReentrantMutex's does. Two goroutines that must exclude each other need two
// RWMutex values, exactly as two processes would. Methods are safe for
// concurrent use, but an owner's acquisitions are meant to be sequential: a
// call that would start one while another is in progress on the same handle
// returns ErrAlreadyLocked. An RWMutex must not be copied.
//
// Downgrade: RLock while holding the write lock succeeds at once and no
// writer can get in between; Unlock then leaves the read lock held. The
// downgrade relies on the write lock, so it is granted only while that
// lock is live: once its Lost has fired (its bound, WithMaxHold, passed, or
// its session's ownership ended), or its node was deleted by another client
// (Break), RLock returns ErrLockLost and leaves nothing, since a writer
// queued behind may hold. The read lock so taken keeps what the write lock
// had: it is revocable with WithRevocable, and with WithMaxHold it ends at
// the write lock's bound at the latest. Upgrade is refused: Lock while
// holding only the read lock returns ErrUpgrade at once, since two readers
// upgrading together would deadlock.
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

// reenter counts one more acquisition of a hold, unless its loss signal
// fired: then it returns ErrLockLost and counts nothing, as ReentrantMutex
// does (release it first).
func (h *hold) reenter() error {
	if closed(h.acq.lost()) {
		return ErrLockLost
	}
	h.n++
	return nil
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
// closed. If the handle holds the write lock it only counts (ErrLockLost if
// its Lost has fired); if it holds only the read lock it returns
// ErrUpgrade. On error nothing is left on the
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
		defer m.mu.Unlock()
		return m.w.reenter()
	case m.r.n > 0:
		m.mu.Unlock()
		return ErrUpgrade
	}
	return m.acquire(ctx, &m.wq, &m.w, nil, try)
}

// RLock blocks until the read lock is held, ctx ends, or the session is
// closed. If the handle holds the read lock it only counts (ErrLockLost if
// its Lost has fired). If it holds the write lock, it downgrades: the read
// lock is granted at once, beside the write lock's place in the queue, so
// no waiting writer can get in between (two server requests: the read
// node's create, then a read that finds the write node still there), or
// ErrLockLost if the write lock was lost (see Downgrade in the type doc).
// Errors are as for Lock.
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
		defer m.mu.Unlock()
		return m.r.reenter()
	case m.w.n > 0:
		defer m.mu.Unlock()
		return m.downgrade(ctx)
	}
	return m.acquire(ctx, &m.rq, &m.r, writer, try)
}

// downgrade takes the read lock beside our write node. m.mu stays held so
// that Unlock cannot delete the write node before the read node exists:
// a writer could get in between. The write hold is relied on, so it is
// checked against its own loss signal (its bound, WithMaxHold, or its
// epoch) before and after the read node is made, and its bound's release
// is held off meanwhile (pin); Join checks that the write node still
// exists (Break). The read hold inherits the write hold's revocation
// watch and bound: it ends when the write hold would have at the latest.
func (m *RWMutex) downgrade(ctx context.Context) error {
	if m.busy {
		return ErrAlreadyLocked
	}
	w := m.w.acq
	if !w.w.pin() {
		return ErrLockLost
	}
	start := m.s.now()
	var h *queue.Held
	err := ErrLockLost
	if !closed(w.lost()) {
		h, err = m.rq.Join(ctx, w.h, m.data)
		err = mapQueueErr(err)
	}
	made := err == nil
	if made && closed(w.lost()) {
		// Lost while the read node was made: no read lock comes of it.
		m.rq.Conn.Untrack(h.Epoch, h.Path)
		m.rq.Conn.Discard(h.Path, h.Epoch.SessionID)
		h, err = nil, ErrLockLost
	}
	w.w.unpin(made)
	m.s.acquired(KindRWMutexRead, m.rq.Dir, start, h, err)
	if err != nil {
		return err
	}
	o := m.o
	if w.w != nil && o.maxHold > 0 {
		o.maxHold = max(time.Until(w.w.until), time.Nanosecond)
	}
	m.r = hold{acquisition{h: h, w: watchHold(&m.rq, h, o, holdEvents{m.s, KindRWMutexRead, m.rq.Dir})}, 1}
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
