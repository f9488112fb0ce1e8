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
		return []Option{WithRevocable()}
	case 3:
		if rw {
			return []Option{WithMaxHold(time.Hour), WithRevocable()}
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
		h.name, h.sess = fmt.Sprintf("s%d.%s", si, kind), si
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
	ml, err := NewMultiLock(pa.Part(), pb.WritePart())
	must(err)
	add("multilock", &handle{ml: ml})
	return hs
}

var errsReleased = []error{ErrLockLost, ErrLeaseLost, ErrNotLocked, ErrLeaseReleased, ErrNotLeader}

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
		return h.exclusive(r, what, h.m.Lock, h.m.TryLock, h.m.Unlock, "/m")
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
			r.released(h, err, held, cur() == nil)
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
			err := f(ctx)
			if err == nil && h.re.HoldCount() == 1 {
				grant(r, h, desc, h.re.h.Current(), []string{"/re"}, excl, 1)
			}
			return err
		}, desc
	case "release", "runlock":
		return func(ctx context.Context) error {
			held := h.re.h.Current()
			err := h.re.Unlock(ctx)
			r.released(h, err, held, h.re.HoldCount() == 0)
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

func (h *handle) semOp(r *run, what string, arg int) (func(context.Context) error, string) {
	p := h.sem.path
	switch what {
	case "acquire", "try", "rlock", "tryrlock", "downgrade":
		n := 1 + arg%2
		f, desc := h.sem.Acquire, fmt.Sprintf("Acquire(%d)", n)
		if what == "try" || what == "tryrlock" {
			f, desc = h.sem.TryAcquire, fmt.Sprintf("TryAcquire(%d)", n)
		}
		return func(ctx context.Context) error {
			l, err := f(ctx, n)
			if err == nil {
				grant(r, h, desc, l.h, []string{p}, lease, n)
			}
			return err
		}, desc
	case "release", "runlock":
		if len(h.holds) == 0 {
			return nil, ""
		}
		b := h.holds[arg%len(h.holds)]
		hd := b.key.(*hold.Hold)
		l := &Lease{line: h.sem.line, h: hd}
		return func(ctx context.Context) error {
			err := l.Release(ctx)
			r.released(h, err, hd, hd.Released())
			return err
		}, fmt.Sprintf("Release(lease %d)", arg%len(h.holds))
	}
	return nil, ""
}

func (h *handle) elOp(r *run, what string) (func(context.Context) error, string) {
	switch what {
	case "acquire", "try", "rlock", "tryrlock":
		return func(ctx context.Context) error {
			_, err := h.el.Campaign(ctx, []byte("v"))
			if err == nil {
				h.el.mu.Lock()
				hd := h.el.held
				h.el.mu.Unlock()
				grant(r, h, "Campaign", hd, []string{"/el"}, excl, 1)
			}
			return err
		}, "Campaign"
	case "release", "runlock":
		return func(ctx context.Context) error {
			h.el.mu.Lock()
			hd := h.el.held
			h.el.mu.Unlock()
			err := h.el.Resign(ctx)
			r.released(h, err, hd, hd == nil || hd.Released() || releasedBy(err))
			return err
		}, "Resign"
	}
	return nil, ""
}

func (h *handle) mlOp(r *run, what string) (func(context.Context) error, string) {
	switch what {
	case "acquire", "try", "rlock", "tryrlock":
		return func(ctx context.Context) error {
			err := h.ml.Lock(ctx)
			if err == nil {
				h.ml.mu.Lock()
				holds, lost := h.ml.holds, h.ml.lost
				h.ml.mu.Unlock()
				var nodes []string
				var toks []int64
				for _, hd := range holds {
					nodes, toks = append(nodes, hd.Nodes()...), append(toks, hd.Token())
				}
				r.granted(h, "MultiLock.Lock", nil, lost, nodes, toks, []string{"/ml/a", "/rw"}, excl, 1)
			}
			return err
		}, "MultiLock.Lock"
	case "release", "runlock":
		return func(ctx context.Context) error {
			err := h.ml.Unlock(ctx)
			h.ml.mu.Lock()
			gone := h.ml.holds == nil
			h.ml.mu.Unlock()
			r.released(h, err, nil, gone)
			return err
		}, "MultiLock.Unlock"
	}
	return nil, ""
}

// releaseAll releases what h holds, as a program ends: each release is
// tried a few times (an injected fault may fail one), and a ReentrantMutex
// may hold once per step (fuzzMaxSteps).
func (h *handle) releaseAll(r *run) {
	for range fuzzMaxSteps + 8 {
		var what string
		switch {
		case h.m != nil && h.m.h.Current() != nil, h.re != nil && h.re.HoldCount() > 0,
			h.rw != nil && h.rw.w.Current() != nil, h.ml != nil && h.holdsML():
			what = "release"
		case h.rw != nil && len(h.rw.reads) > 0:
			what = "runlock"
		case h.sem != nil && len(h.holds) > 0:
			what = "release"
		case h.el != nil && h.el.held != nil && !h.el.held.Released():
			what = "release"
		default:
			return
		}
		r.start(h, what, 0)
		r.settle()
		if !r.waitCalls() {
			return
		}
	}
	r.failf("%s still holds after %d releases", h.name, fuzzMaxSteps+8)
}

func (h *handle) holdsML() bool {
	h.ml.mu.Lock()
	defer h.ml.mu.Unlock()
	return h.ml.holds != nil
}

// grant records hd, granted by what, in the model.
func grant(r *run, h *handle, what string, hd *hold.Hold, paths []string, m mode, n int) {
	r.granted(h, what, hd, hd.Lost(), hd.Nodes(), []int64{hd.Token()}, paths, m, n)
}

// setBoundTimer makes f the max holds' timer, until restore.
func setBoundTimer(f func(time.Duration) (<-chan time.Time, func() bool)) (restore func()) {
	prev := hold.BoundTimer
	hold.BoundTimer = f
	return func() { hold.BoundTimer = prev }
}
