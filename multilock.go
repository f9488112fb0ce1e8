package zklock

import (
	"context"
	"fmt"
	"slices"
	"sync"

	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/zk"
)

// MultiLock holds several locks as one: all of them, or none. Its parts
// are taken in one canonical order (by path), whatever order they were
// given in, so two MultiLocks naming the same paths in different orders,
// in one process or many, never deadlock (Redisson #1160's bug). Every
// part must be on a distinct path, and a handle may be in one part only.
//
// Holding is not guaranteed once Lost fires: it fires when any part's loss
// signal does. Guard returns one check per part: put them first in
// zk.Client.Multi so that the other writes commit only while every part is
// held. Tokens reports each part's, in the order the parts were given to
// NewMultiLock. Each part keeps its handle's options: a part made
// revocable (WithRevocable) calls its handle's listener while the
// MultiLock holds; a part's bound (WithMaxHold) makes
// Lost fire; a part of a cohort (WithCohort) is handed on within its
// process as its handle's Lock would be. A part broken by Break is not
// told, as its handle would not be.
//
// A MultiLock is not reentrant: Lock while it holds or acquires returns
// ErrAlreadyLocked. Its methods are safe for concurrent use; it must not be
// copied, nor used unless NewMultiLock made it (else ErrInvalidArgument),
// and its parts' handles must not be used on their own while it holds.
type MultiLock struct {
	m     *hold.Multi
	parts []Part

	mu        sync.Mutex
	acquiring bool
	holds     []*hold.Hold    // while held, in the order of the parts
	ended     []bool          // beside holds: the parts whose release ended, never released again
	lost      <-chan struct{} // closed once any part's loss signal fires or its release ends
	endLost   func()          // closes lost
}

// NewMultiLock returns a MultiLock over parts. It returns
// ErrInvalidArgument when there are none, when one is nil, or when two are
// on one path or of one handle.
func NewMultiLock(parts ...Part) (*MultiLock, error) {
	hp := make([]hold.Part, len(parts))
	for i, p := range parts {
		if p == nil {
			return nil, fmt.Errorf("%w: part %d is nil", ErrInvalidArgument, i)
		}
		hp[i] = p.part()
	}
	m, err := hold.NewMulti(hp)
	if err != nil {
		return nil, err
	}
	return &MultiLock{m: m, parts: parts}, nil
}

// Lock acquires every part, in path order, and returns once all are held,
// ctx ends, or a part fails. On failure or cancellation it releases, in
// reverse order, what it had taken, and returns the part's error (for a
// cancelled ctx one for which errors.Is(err, ctx.Err()) holds): nothing of
// it is left on the server, as for each part's own Lock.
//
// It returns success only with every part live: each time it takes a
// part, it checks the parts it holds against their own loss signals, and
// if one has fired (its session expired while Lock waited for a later
// part, or its bound, WithMaxHold, passed) a rival may hold that part, so
// Lock releases what it took and starts over, in path order, until ctx
// ends. (A part whose bound is shorter than the time the others take to
// acquire so never lets Lock return.) A node deleted by another client
// (Break) fires no loss signal, so once every part is taken, Lock also
// reads the nodes of each part but the last on the server (one request per
// node) and starts over if one is gone.
func (m *MultiLock) Lock(ctx context.Context) error {
	if m.unmade() {
		return unmade("MultiLock", "NewMultiLock")
	}
	if err := checkCtx(ctx); err != nil {
		// Named as a part's error is, by the part Lock begins with: the
		// first in path order.
		first := m.parts[0].part().Path
		for _, p := range m.parts[1:] {
			first = min(first, p.part().Path)
		}
		return named(ctx, "multi-lock part", first, err)
	}
	m.mu.Lock()
	if m.acquiring || m.holds != nil {
		m.mu.Unlock()
		return ErrAlreadyLocked
	}
	m.acquiring = true
	m.mu.Unlock()
	holds, err := m.m.Acquire(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acquiring = false
	if err != nil {
		return err
	}
	m.holds, m.ended = holds, make([]bool, len(holds))
	m.lost, m.endLost = hold.LostAny(holds)
	return nil
}

// unmade reports that NewMultiLock did not make m (unmade).
func (m *MultiLock) unmade() bool { return m == nil || m.m == nil }

// Unlock releases every part, in reverse path order, each retrying as its
// own Unlock does. It returns ErrNotLocked if the MultiLock does not hold,
// and the parts' errors joined; a part whose loss signal fired counts as
// released (its error, ErrLockLost, is returned), and so does a part whose
// release was cut off by ctx (see Mutex.Unlock: its node is deleted in the
// background). Each part is released once: a part whose release returned
// (given back, counted down if it is a ReentrantMutex its owner held
// already, lost, or cut off) is never released again. Parts whose release
// had not begun when ctx ended are still held: the MultiLock then still
// holds them, and Unlock may be called again, releasing only them. Once
// any part's release has ended, Lost is closed (every channel it returned
// during the hold too): the MultiLock no longer holds every part.
func (m *MultiLock) Unlock(ctx context.Context) error {
	if m.unmade() {
		return unmade("MultiLock", "NewMultiLock")
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds == nil {
		return ErrNotLocked
	}
	err := m.m.Release(ctx, m.holds, m.ended)
	if slices.Contains(m.ended, true) {
		m.endLost() // a part is over: holding every part is not guaranteed
	}
	if slices.Contains(m.ended, false) {
		return err // parts still held: the next Unlock releases them
	}
	m.holds, m.ended = nil, nil
	return err
}

// Lost returns a channel that is closed when any part's loss signal fires,
// or when any part's release ends (an Unlock, even one cut off by its ctx
// with parts still held): holding every part is not guaranteed from then
// on. It is one channel for the whole hold: a channel taken while every
// part was held closes then too. It is closed when nothing is held.
func (m *MultiLock) Lost() <-chan struct{} {
	if m == nil {
		return closedCh // nothing held, as for a zero MultiLock
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds == nil || hold.AnyLost(m.holds) { // the watcher closes m.lost a wake-up later
		return closedCh
	}
	return m.lost
}

// Guard returns one ZooKeeper check per part (each a *zk.CheckOp, whose
// Path is the part's node), in path order, each succeeding only while its
// part is held: put them first in
// zk.Client.Multi (append the writes: s.Client().Multi(ctx, append(ml.Guard(),
// writes...)...)) so that the writes commit only while every part is held.
// When nothing is held it returns one nil *zk.CheckOp, which Multi refuses
// (ErrInvalidArgument), as it refuses Mutex.Guard's nil: an empty guard
// would let the appended writes commit unguarded.
func (m *MultiLock) Guard() []zk.Op {
	if m == nil {
		return noGuard()
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds == nil {
		return noGuard()
	}
	ops := make([]zk.Op, 0, len(m.holds))
	for _, i := range m.m.Order() {
		ops = append(ops, checkOp(m.holds[i].Guard()))
	}
	return ops
}

// Tokens returns each part's fencing token, in the order the parts were
// given to NewMultiLock, or nil when nothing is held.
func (m *MultiLock) Tokens() []int64 {
	if m == nil {
		return nil
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.holds == nil {
		return nil
	}
	out := make([]int64, len(m.holds))
	for i, h := range m.holds {
		out[i] = h.Token()
	}
	return out
}
