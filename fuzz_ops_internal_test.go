package zklock

import (
	"context"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/hold"
)

// The operations of FuzzHolds' semaphores, elections and MultiLocks, and
// the release of everything at the end (fuzz_handles_internal_test.go has
// the locks').

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
			gen := r.gen.Load()
			if err == nil {
				h.ml.mu.Lock()
				holds, lost := h.ml.holds, h.ml.lost
				h.ml.mu.Unlock()
				if holds == nil {
					return err // unlocked by another goroutine already
				}
				if hold.AnyLost(holds) { // the watcher closes lost a wake-up later
					lost = closedCh
				}
				var nodes []string
				var toks []int64
				for _, hd := range holds {
					nodes, toks = append(nodes, hd.Nodes()...), append(toks, hd.Token())
				}
				r.granted(h, "MultiLock.Lock", gen, holds, lost, nodes, toks, []string{"/ml/a", "/rw"}, excl, 1)
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
		case h.m != nil && h.m.h.Current() != nil, h.re != nil && h.re.holdCount() > 0,
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

// grant records hd, granted by what, in the model; nil (another goroutine
// of the handle released it already) is not recorded.
func grant(r *run, h *handle, what string, hd *hold.Hold, paths []string, m mode, n int) {
	gen := r.gen.Load()
	if hd == nil {
		return
	}
	r.granted(h, what, gen, []*hold.Hold{hd}, hd.Lost(), hd.Nodes(), []int64{hd.Token()}, paths, m, n)
}

// setBoundTimer makes f the max holds' timer, until restore.
func setBoundTimer(f func(time.Duration) (<-chan time.Time, func() bool)) (restore func()) {
	prev := hold.BoundTimer
	hold.BoundTimer = f
	return func() { hold.BoundTimer = prev }
}
