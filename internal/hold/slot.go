package hold

import (
	"context"
	"sync"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// Acquirer acquires and releases holds: a Line, or a cohort (CohortLine).
type Acquirer interface {
	Acquire(ctx context.Context, r queue.Request) (*Hold, error)
	Release(ctx context.Context, h *Hold) error
}

// CohortLine acquires through the cohort of Path in a session's registry,
// forming it with Form.
type CohortLine struct {
	R    *Cohorts
	Path string
	Form func() *Cohort
}

// Acquire acquires a local hold of the cohort (Cohort.Acquire).
func (c CohortLine) Acquire(ctx context.Context, r queue.Request) (*Hold, error) {
	return c.R.Acquire(ctx, c.Path, c.Form, r)
}

// Release releases a local hold of the cohort (Cohort.Release).
func (c CohortLine) Release(ctx context.Context, h *Hold) error {
	return c.R.Release(ctx, c.Path, h)
}

// Slot is a handle's one hold at a time, as a sync.Mutex has one holder:
// every Lock is an acquisition of its own, queued on the server in the
// order the calls reach it, and one the server grants while the slot is
// taken (possible only after the holder's loss) waits until the holder
// lets go, and is handed over only if it is still live then (handOver).
// Any goroutine may Unlock. It is safe for concurrent use.
type Slot struct {
	A Acquirer

	mu    sync.Mutex
	cur   *Hold
	freed chan struct{} // closed and replaced when cur is cleared
}

// Lock acquires, then takes the slot. A hold that the server granted but
// that is lost before the slot is free (its epoch ended, its bound passed,
// while the holder before it held on) is never handed over (handOver): it
// is given back, and Lock acquires again, as a waiter whose epoch ended
// enqueues again. When ctx ends first, nothing is held: a hold granted but
// not yet placed in the slot is released.
func (s *Slot) Lock(ctx context.Context, r queue.Request) error {
	_, err := s.Take(ctx, r)
	return err
}

// Take is Lock that returns the hold it placed in the slot: the caller's,
// even if another goroutine has since unlocked the slot (a MultiLock's
// part, whose handle other goroutines may share).
func (s *Slot) Take(ctx context.Context, r queue.Request) (*Hold, error) {
	if r.Try {
		if cur := s.Current(); cur != nil {
			return nil, &errs.LockedError{Holder: cur.place.Last().Node().Name, Session: cur.Epoch().SessionID}
		}
	}
	for {
		h, err := s.A.Acquire(ctx, r)
		if err != nil {
			return nil, err
		}
		placed, err := s.place(ctx, h)
		if err != nil {
			return nil, err
		}
		if placed {
			return h, nil
		}
	}
}

// place puts h in the slot once it is free, if h is live then; false if
// h was lost first (it is given back), or ctx ended (the error). A hold
// granted while the slot's holder held on (after that holder's loss: the
// server let us in) may have waited long, and its node may have been
// deleted meanwhile by another client (Break), which fires no loss
// signal: it is handed over only once its node is seen standing
// (Standing.Stands). One granted by the holder's release is not looked
// at again: that release is under way when the grant comes.
func (s *Slot) place(ctx context.Context, h *Hold) (bool, error) {
	unproven := false
	for {
		s.mu.Lock()
		if s.cur == nil && handOver(h) && !unproven {
			s.cur = h
			s.mu.Unlock()
			return true, nil
		}
		if s.cur == nil { // free, but h is lost or its node unproven
			s.mu.Unlock()
			if !handOver(h) {
				giveBack(ctx, h, s.A.Release)
				return false, nil
			}
			ok, err := s.stands(ctx, h)
			if err != nil || !ok {
				giveBack(ctx, h, s.A.Release)
				return false, err
			}
			unproven = false
			continue
		}
		unproven = unproven || s.cur.state.Load() == held
		if s.freed == nil {
			s.freed = make(chan struct{})
		}
		freed := s.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-h.Lost(): // enqueue again now, not once the slot is free
			giveBack(ctx, h, s.A.Release)
			return false, nil
		case <-ctx.Done():
			giveBack(ctx, h, s.A.Release)
			return false, ctx.Err()
		}
	}
}

// Confirm reports, for h, the slot's hold, that it may be handed out again
// without an acquisition (a ReentrantMutex owner's re-entry): nil only if
// h is still the slot's, live (handOver), and its nodes stand on the
// server as its session's (Standing.Stands: one request per node, one
// round trip for a lock). A node deleted by another client (Break) fires
// no loss signal, and a rival may hold by now, so the loss signal alone
// does not do. It returns errs.ErrLockLost when h is lost or its node is
// gone (h stays the slot's, for its owner to release), errs.ErrNotLocked
// when h is no longer the slot's, and the read's error (ctx's) otherwise.
func (s *Slot) Confirm(ctx context.Context, h *Hold) error {
	if h == nil || s.Current() != h {
		return errs.ErrNotLocked
	}
	if !handOver(h) {
		return errs.ErrLockLost
	}
	ok, err := s.stands(ctx, h)
	switch {
	case err != nil:
		return err
	case !ok || !handOver(h): // gone, or lost while we looked
		return errs.ErrLockLost
	case s.Current() != h:
		return errs.ErrNotLocked // released while we looked
	}
	return nil
}

// Standing is an Acquirer that can tell whether a hold's nodes still stand.
type Standing interface {
	Stands(ctx context.Context, h *Hold) (bool, error)
}

// Stands reports whether h's nodes still stand on the server as its
// session's (Standing.Stands through the slot's Acquirer; true if it
// cannot tell).
func (s *Slot) Stands(ctx context.Context, h *Hold) (bool, error) { return s.stands(ctx, h) }

// stands asks s.A whether h's nodes stand; true if it cannot tell.
func (s *Slot) stands(ctx context.Context, h *Hold) (bool, error) {
	if st, ok := s.A.(Standing); ok {
		return st.Stands(ctx, h)
	}
	return true, nil
}

// Unlock releases the slot's hold (Acquirer.Release): errs.ErrNotLocked when
// it is empty. The slot is free again once the release began, whatever
// its outcome (release.go); a ctx ended before the call changes nothing.
func (s *Slot) Unlock(ctx context.Context) error { return s.Give(ctx, nil) }

// Give is Unlock of h (nil: whatever the slot holds): errs.ErrNotLocked
// when the slot does not hold h, which another goroutine unlocked then.
func (s *Slot) Give(ctx context.Context, h *Hold) error {
	if err := CheckCtx(ctx); err != nil {
		return err
	}
	cur := s.Current()
	if cur == nil || (h != nil && cur != h) {
		return errs.ErrNotLocked
	}
	h = cur
	err := s.A.Release(ctx, h)
	if h.Released() { // given back, lost, or cut off (release.go)
		s.clear(h)
	}
	return err
}

func (s *Slot) clear(h *Hold) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cur != h {
		return
	}
	s.cur = nil
	if s.freed != nil {
		close(s.freed)
		s.freed = nil
	}
}

// Current returns the slot's hold, nil when empty.
func (s *Slot) Current() *Hold {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cur
}
