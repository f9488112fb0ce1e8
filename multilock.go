package zklock

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"
)

// Part is one hold of a MultiLock: the write or read side of an RWMutex,
// a Mutex or ReentrantMutex, or a Semaphore lease. Make one with
// Mutex.Part, ReentrantMutex.Part, RWMutex.WritePart, RWMutex.ReadPart or
// Semaphore.Part. The zero Part is invalid.
type Part struct {
	path    string
	handle  any // the handle behind the part: a handle may be in a MultiLock once
	acquire func(context.Context) error
	release func(context.Context) error
	hold    func() holder
}

// Part returns m as a part of a MultiLock.
func (m *Mutex) Part() Part {
	return Part{path: m.q.Dir, handle: m, acquire: m.Lock, release: m.Unlock, hold: func() holder { return m }}
}

// Part returns r as a part of a MultiLock.
func (r *ReentrantMutex) Part() Part {
	return Part{path: r.m.q.Dir, handle: r, acquire: r.Lock, release: r.Unlock, hold: func() holder { return r }}
}

// WritePart returns m's write lock as a part of a MultiLock.
func (m *RWMutex) WritePart() Part {
	return Part{path: m.wq.Dir, handle: m, acquire: m.Lock, release: m.Unlock, hold: func() holder { return m }}
}

// ReadPart returns m's read lock as a part of a MultiLock.
func (m *RWMutex) ReadPart() Part {
	return Part{path: m.rq.Dir, handle: m, acquire: m.RLock, release: m.RUnlock, hold: func() holder { return m }}
}

// Part returns one lease of s as a part of a MultiLock; a MultiLock holds
// one lease of the semaphore at a time.
func (s *Semaphore) Part() Part {
	var mu sync.Mutex
	var l *Lease
	lease := func() *Lease { mu.Lock(); defer mu.Unlock(); return l }
	return Part{
		path:   s.path,
		handle: s,
		acquire: func(ctx context.Context) error {
			got, err := s.Acquire(ctx, 1)
			mu.Lock()
			l = got
			mu.Unlock()
			return err
		},
		release: func(ctx context.Context) error {
			if lease() == nil {
				return ErrNotLocked
			}
			return lease().Release(ctx)
		},
		hold: func() holder {
			if h := lease(); h != nil {
				return h
			}
			return noHold{}
		},
	}
}

// MultiLock holds several locks as one: all of them, or none. Its parts
// are taken in one canonical order (by path), whatever order they were
// given in, so two MultiLocks naming the same paths in different orders,
// in one process or many, never deadlock (Redisson #1160's bug). Every
// part must be on a distinct path, and a handle may be in one part only.
//
// Holding is not guaranteed once Lost fires: it fires when any part's loss
// signal does. Guard returns one check per part: put them first in
// Session.Multi so that the other writes commit only while every part is
// held. Tokens and Nodes report each part's, in the order the parts were
// given to NewMultiLock. Each part keeps its handle's options: a part made
// revocable (WithRevocable) signals on its handle's Revoked, which may be
// read while the MultiLock holds; a part's bound (WithMaxHold) makes
// Lost fire; a part of a cohort (WithCohort) is handed on within its
// process as its handle's Lock would be. A part broken by Break is not
// told, as its handle would not be.
//
// A MultiLock is not reentrant: Lock while it holds or acquires returns
// ErrAlreadyLocked. Its methods are safe for concurrent use; it must not be
// copied, and its parts' handles must not be used on their own while it
// holds.
type MultiLock struct {
	parts []Part // as given
	order []int  // indexes into parts, in acquisition order

	mu        sync.Mutex
	acquiring bool
	held      bool
	lost      chan struct{} // closed once any part's loss signal fires
	stop      chan struct{} // closed by Unlock: ends the loss watcher
}

// NewMultiLock returns a MultiLock over parts. It returns
// ErrInvalidArgument when there are none, when one is the zero Part, or
// when two are on one path or of one handle.
func NewMultiLock(parts ...Part) (*MultiLock, error) {
	if len(parts) == 0 {
		return nil, fmt.Errorf("%w: a MultiLock needs at least one part", ErrInvalidArgument)
	}
	order := make([]int, len(parts))
	for i, p := range parts {
		if p.acquire == nil {
			return nil, fmt.Errorf("%w: part %d is the zero Part", ErrInvalidArgument, i)
		}
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return cmp.Compare(parts[a].path, parts[b].path) })
	for i := 1; i < len(order); i++ {
		if a, b := parts[order[i-1]], parts[order[i]]; a.path == b.path {
			return nil, fmt.Errorf("%w: two parts on %s: the second would wait for the first forever", ErrInvalidArgument, a.path)
		}
	}
	seen := map[any]bool{}
	for _, p := range parts {
		if seen[p.handle] {
			return nil, fmt.Errorf("%w: one handle in two parts", ErrInvalidArgument)
		}
		seen[p.handle] = true
	}
	return &MultiLock{parts: parts, order: order}, nil
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
// acquire so never lets Lock return.)
func (m *MultiLock) Lock(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	if m.acquiring || m.held {
		m.mu.Unlock()
		return ErrAlreadyLocked
	}
	m.acquiring = true
	m.mu.Unlock()
	err := m.lock(ctx)
	m.mu.Lock()
	defer m.mu.Unlock()
	m.acquiring = false
	if err != nil {
		return err
	}
	m.held = true
	m.lost, m.stop = make(chan struct{}), make(chan struct{})
	go m.watchLoss(m.lost, m.stop)
	return nil
}

// lock takes every part in order. A part is relied on until every part is
// held: once one is taken, the parts taken before it are checked against
// their own loss signals, and if one fired (its session expired, its bound
// passed) a rival may hold it, so everything taken is released and Lock
// starts over, in order, until ctx ends.
func (m *MultiLock) lock(ctx context.Context) error {
	for {
		n, err := m.takeLive(ctx)
		if n == len(m.order) && err == nil {
			return nil
		}
		// Release with a fresh ctx: ctx may be what ended, and a part left
		// held would block everyone else.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
		rerr := m.releaseFirst(rctx, n)
		cancel()
		if err != nil && !errors.Is(err, errPartLost) {
			return errors.Join(err, rerr)
		}
		if rerr != nil {
			return rerr
		}
	}
}

// errPartLost: a part taken was lost before every part was held.
var errPartLost = errors.New("zklock: a multi-lock part was lost")

// takeLive takes the parts in order while those taken are live; it
// returns how many it holds: all of them, with no error, on success.
func (m *MultiLock) takeLive(ctx context.Context) (int, error) {
	for n, i := range m.order {
		if err := m.parts[i].acquire(ctx); err != nil {
			return n, fmt.Errorf("zklock: multi-lock part %s: %w", m.parts[i].path, err)
		}
		if m.anyLost(n + 1) {
			return n + 1, errPartLost
		}
	}
	return len(m.order), nil
}

// anyLost reports whether the loss signal of one of the first n parts in
// acquisition order has fired.
func (m *MultiLock) anyLost(n int) bool {
	for _, i := range m.order[:n] {
		if closed(m.parts[i].hold().Lost()) {
			return true
		}
	}
	return false
}

// releaseTimeout bounds the release of a failed Lock's parts; a part whose
// release runs out of time goes with its session's ownership epoch.
const releaseTimeout = 10 * time.Second

// releaseFirst releases the first n parts in acquisition order, last first.
func (m *MultiLock) releaseFirst(ctx context.Context, n int) error {
	var errs []error
	for k := n - 1; k >= 0; k-- {
		p := m.parts[m.order[k]]
		if err := p.release(ctx); err != nil && !errors.Is(err, ErrLockLost) && !errors.Is(err, ErrLeaseLost) &&
			!errors.Is(err, ErrLeaseReleased) {
			errs = append(errs, fmt.Errorf("zklock: release multi-lock part %s: %w", p.path, err))
		}
	}
	return errors.Join(errs...)
}

// watchLoss closes lost when any part's loss signal fires, until stop.
func (m *MultiLock) watchLoss(lost, stop chan struct{}) {
	cases := []reflect.SelectCase{{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(stop)}}
	for _, p := range m.parts {
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(p.hold().Lost())})
	}
	if i, _, _ := reflect.Select(cases); i > 0 {
		close(lost)
	}
}

// Unlock releases every part, in reverse path order, each retrying as its
// own Unlock does. It returns ErrNotLocked if the MultiLock does not hold,
// and the parts' errors joined; a part whose loss signal fired counts as
// released (its error, ErrLockLost or ErrLeaseLost, is returned). On any
// other error (ctx ended) the MultiLock still holds what was not released,
// and Unlock may be called again.
func (m *MultiLock) Unlock(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held {
		return ErrNotLocked
	}
	var errs, lost []error
	for k := len(m.order) - 1; k >= 0; k-- {
		p := m.parts[m.order[k]]
		if p.hold().Node() == "" {
			continue // released by an earlier Unlock that failed later on
		}
		switch err := p.release(ctx); {
		case err == nil:
		case errors.Is(err, ErrLockLost) || errors.Is(err, ErrLeaseLost):
			lost = append(lost, err)
		default:
			errs = append(errs, fmt.Errorf("zklock: release multi-lock part %s: %w", p.path, err))
		}
	}
	if len(errs) > 0 {
		return errors.Join(errs...)
	}
	m.held = false
	close(m.stop)
	if len(lost) > 0 {
		return lost[0]
	}
	return nil
}

// Lost returns a channel that is closed when any part's loss signal fires:
// holding every part is not guaranteed from then on. It is closed when
// nothing is held.
func (m *MultiLock) Lost() <-chan struct{} {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held || m.anyLost(len(m.order)) { // watchLoss closes m.lost a wake-up later
		return closedCh
	}
	return m.lost
}

// Guard returns one ZooKeeper check per part (each a *CheckOp), in path
// order, each succeeding only while its part is held: put them first in
// Session.Multi (append the writes: s.Multi(ctx, append(ml.Guard(),
// writes...)...)) so that the writes commit only while every part is held.
// It returns nil when nothing is held.
func (m *MultiLock) Guard() []Op {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held {
		return nil
	}
	ops := make([]Op, 0, len(m.order))
	for _, i := range m.order {
		ops = append(ops, m.parts[i].hold().Guard())
	}
	return ops
}

// Tokens returns each part's fencing token, in the order the parts were
// given to NewMultiLock, or nil when nothing is held.
func (m *MultiLock) Tokens() []int64 {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held {
		return nil
	}
	out := make([]int64, len(m.parts))
	for i, p := range m.parts {
		out[i] = p.hold().Token()
	}
	return out
}

// Nodes returns each part's node, in the order the parts were given to
// NewMultiLock, or nil when nothing is held.
func (m *MultiLock) Nodes() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	if !m.held {
		return nil
	}
	out := make([]string, len(m.parts))
	for i, p := range m.parts {
		out[i] = p.hold().Node()
	}
	return out
}

// noHold is the holder of a part that holds nothing.
type noHold struct{}

func (noHold) Lost() <-chan struct{} { return closedCh }
func (noHold) Token() int64          { return 0 }
func (noHold) Guard() *CheckOp       { return nil }
func (noHold) Node() string          { return "" }
