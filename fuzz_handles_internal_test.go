package zklock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/hold"
)

// handle is one primitive handle of FuzzHolds, with what the model
// believes it holds.
type handle struct {
	name string
	sess int
	m    *Mutex
	re   *ReentrantMutex
	rw   *RWMutex
	sem  *Semaphore
	el   *Election
	ml   *MultiLock

	prim    any // the primitive: handles that share it are goroutines of one handle
	pending *call
	holds   []*belief
}

// fuzzOption is the option a 2-bit code gives a Mutex, ReentrantMutex or
// RWMutex (an RWMutex takes no cohort: it gets both the others).
func fuzzOption(code byte, rw bool) []Option {
	switch code & 3 {
	case 1:
		return []Option{WithMaxHold(time.Hour)} // the run's timers decide when it passes
	case 2:
		return []Option{WithRevocable(func() {})}
	case 3:
		if rw {
			return []Option{WithMaxHold(time.Hour), WithRevocable(func() {})}
		}
		return []Option{WithCohort(0, 0)}
	}
	return nil
}

// newHandles makes session si's handles: two Mutexes on /m, a
// ReentrantMutex on /re, an RWMutex on /rw, a Semaphore of 2 in each layout
// (/sl, /sp), an Election on /el, and a MultiLock of a Mutex on /ml/a and
// an RWMutex's write lock on /rw. opts[si] gives the options of the first
// four (2 bits each), opts[3]'s bit si a max hold to the MultiLock's /ml/a.
func newHandles(t *testing.T, r *run, si int, opts []byte) []*handle {
	s, b := r.sess[si], opts[si]
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	hs := make([]*handle, 0, 8)
	add := func(kind string, h *handle) {
		h.name, h.sess, h.prim = fmt.Sprintf("s%d.%s", si, kind), si, h.primitive()
		hs = append(hs, h)
	}
	for i := range 2 {
		m, err := NewMutex(s, "/m", fuzzOption(b>>(2*i), false)...)
		must(err)
		add(fmt.Sprintf("mutex%d", i), &handle{m: m})
	}
	re, err := NewReentrantMutex(s, "/re", fuzzOption(b>>4, false)...)
	must(err)
	add("reentrant", &handle{re: re})
	rw, err := NewRWMutex(s, "/rw", fuzzOption(b>>6, true)...)
	must(err)
	add("rw", &handle{rw: rw})
	sl, err := NewSemaphore(s, "/sl", 2)
	must(err)
	add("leases", &handle{sem: sl})
	sp, err := NewSemaphore(s, "/sp", 2, WithPermitLayout())
	must(err)
	add("permits", &handle{sem: sp})
	el, err := NewElection(s, "/el")
	must(err)
	add("election", &handle{el: el})
	var mlOpts []Option
	if opts[3]>>si&1 == 1 {
		mlOpts = []Option{WithMaxHold(time.Hour)}
	}
	pa, err := NewMutex(s, "/ml/a", mlOpts...)
	must(err)
	pb, err := NewRWMutex(s, "/rw")
	must(err)
	ml, err := NewMultiLock(pa, pb)
	must(err)
	add("multilock", &handle{ml: ml})
	return hs
}

// primitive returns the primitive h drives.
func (h *handle) primitive() any {
	switch {
	case h.m != nil:
		return h.m
	case h.re != nil:
		return h.re
	case h.rw != nil:
		return h.rw
	case h.sem != nil:
		return h.sem
	case h.el != nil:
		return h.el
	}
	return h.ml
}

var errsReleased = []error{ErrLockLost, ErrNotLocked}

// releasedBy reports whether err says the hold is no longer held.
func releasedBy(err error) bool {
	if err == nil {
		return true
	}
	for _, e := range errsReleased {
		if errors.Is(err, e) {
			return true
		}
	}
	return false
}

// op returns the call that runs what on h, which records its outcome in
// the model (nil: what does not apply to h). r.mu is held.
func (h *handle) op(r *run, what string, arg int) (func(context.Context) error, string) {
	switch {
	case h.m != nil:
		return h.exclusive(r, what, h.m.Lock, h.m.TryLock, h.m.Unlock, h.m.q.Dir)
	case h.re != nil:
		return h.reentrant(r, what)
	case h.rw != nil:
		return h.rwOp(r, what)
	case h.sem != nil:
		return h.semOp(r, what, arg)
	case h.el != nil:
		return h.elOp(r, what)
	}
	return h.mlOp(r, what)
}

// exclusive is the op of a Mutex (and an RWMutex's write lock).
func (h *handle) exclusive(r *run, what string, lock, try, unlock func(context.Context) error, path string) (func(context.Context) error, string) {
	cur := func() *hold.Hold {
		if h.m != nil {
			return h.m.h.Current()
		}
		return h.rw.w.Current()
	}
	switch what {
	case "acquire", "try", "rlock", "tryrlock":
		f, desc := lock, "Lock"
		if what == "try" || what == "tryrlock" {
			f, desc = try, "TryLock"
		}
		return func(ctx context.Context) error {
			err := f(ctx)
			if err == nil {
				grant(r, h, desc, cur(), []string{path}, excl, 1)
			}
			return err
		}, desc
	case "release", "runlock":
		return func(ctx context.Context) error {
			held := cur()
			err := unlock(ctx)
			r.released(h, err, held, held != nil && held.Released())
			return err
		}, "Unlock"
	}
	return nil, ""
}

func (h *handle) reentrant(r *run, what string) (func(context.Context) error, string) {
	switch what {
	case "acquire", "try", "rlock", "tryrlock":
		f, desc := h.re.Lock, "Lock"
		if what == "try" || what == "tryrlock" {
			f, desc = h.re.TryLock, "TryLock"
		}
		return func(ctx context.Context) error {
			gen := r.gen.Load()
			err := f(ctx)
			if err == nil { // a count of its hold, or its hold: recorded once
				hd := h.re.h.Current()
				r.reentered(h, desc, gen, hd)
				grant(r, h, desc, hd, []string{"/re"}, excl, 1)
			}
			return err
		}, desc
	case "release", "runlock":
		return func(ctx context.Context) error {
			held := h.re.h.Current()
			err := h.re.Unlock(ctx)
			r.released(h, err, held, held != nil && held.Released())
			return err
		}, "Unlock"
	}
	return nil, ""
}

func (h *handle) rwOp(r *run, what string) (func(context.Context) error, string) {
	m := h.rw
	switch what {
	case "acquire", "try", "release":
		return h.exclusive(r, what, m.Lock, m.TryLock, m.Unlock, "/rw")
	case "rlock", "tryrlock":
		try := what == "tryrlock"
		return func(ctx context.Context) error {
			hd, err := m.rlock(ctx, try)
			if err == nil {
				grant(r, h, "RLock", hd, []string{"/rw"}, read, 1)
			}
			return err
		}, map[bool]string{false: "RLock", true: "TryRLock"}[try]
	case "downgrade":
		return func(ctx context.Context) error {
			err := m.Downgrade(ctx)
			if err == nil {
				m.mu.Lock()
				hd := m.reads[len(m.reads)-1]
				m.mu.Unlock()
				grant(r, h, "Downgrade", hd, []string{"/rw"}, read, 1)
			}
			return err
		}, "Downgrade"
	case "runlock":
		return func(ctx context.Context) error {
			m.mu.Lock()
			var oldest *hold.Hold
			if len(m.reads) > 0 {
				oldest = m.reads[0]
			}
			m.mu.Unlock()
			err := m.RUnlock(ctx)
			r.released(h, err, oldest, oldest != nil && oldest.Released())
			return err
		}, "RUnlock"
	}
	return nil, ""
}
