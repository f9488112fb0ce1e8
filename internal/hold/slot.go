package hold

import (
	"context"
	"errors"
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
// lets go. Any goroutine may Unlock. It is safe for concurrent use.
type Slot struct {
	A Acquirer

	mu    sync.Mutex
	cur   *Hold
	freed chan struct{} // closed and replaced when cur is cleared
}

// Lock acquires, then takes the slot. When ctx ends first, nothing is
// held: a hold granted but not yet placed in the slot is released.
func (s *Slot) Lock(ctx context.Context, r queue.Request) error {
	if r.Try {
		if cur := s.Current(); cur != nil {
			return &errs.LockedError{Holder: cur.place.Last().Node().Name, Session: cur.Epoch().SessionID}
		}
	}
	h, err := s.A.Acquire(ctx, r)
	if err != nil {
		return err
	}
	for {
		s.mu.Lock()
		if s.cur == nil {
			s.cur = h
			s.mu.Unlock()
			return nil
		}
		if s.freed == nil {
			s.freed = make(chan struct{})
		}
		freed := s.freed
		s.mu.Unlock()
		select {
		case <-freed:
		case <-ctx.Done():
			rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), releaseTimeout)
			_ = s.A.Release(rctx, h)
			cancel()
			return ctx.Err()
		}
	}
}

// Unlock releases the slot's hold (Acquirer.Release): errs.ErrNotLocked when
// it is empty. The slot is free again once the release succeeded or found
// the hold lost; when ctx ends first it still holds.
func (s *Slot) Unlock(ctx context.Context) error {
	if err := CheckCtx(ctx); err != nil {
		return err
	}
	h := s.Current()
	if h == nil {
		return errs.ErrNotLocked
	}
	err := s.A.Release(ctx, h)
	if err == nil || errors.Is(err, errs.ErrLockLost) || (errors.Is(err, errs.ErrNotLocked) && h.Released()) {
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
