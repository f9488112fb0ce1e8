package zklock

import (
	"context"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/queue/queuetest"
)

// call is a handle's blocking call, run on a goroutine.
type call struct {
	what     string
	cancel   context.CancelFunc
	done     chan struct{}
	acquires bool // an acquisition
	waited   bool // still pending when its step ended; r.mu
}

// start runs the operation what on h (fuzz_handles_internal_test.go says
// what each does on each kind of handle) on a goroutine, unless h already
// has a call pending.
func (r *run) start(h *handle, what string, arg byte) {
	ctx, cancel := context.WithCancel(context.Background())
	r.startCtx(h, what, arg, ctx, cancel, "")
}

func (r *run) startCtx(h *handle, what string, arg byte, ctx context.Context, cancel context.CancelFunc, note string) {
	r.mu.Lock()
	if h.pending != nil || (note == hookNote && !r.hooksOn) {
		r.mu.Unlock()
		cancel()
		return
	}
	do, desc := h.op(r, what, int(arg))
	if do == nil {
		r.mu.Unlock()
		cancel()
		return
	}
	ctx, cancelMax := context.WithTimeout(ctx, fuzzCallMax)
	c := &call{what: desc + note, cancel: cancel, done: make(chan struct{}), acquires: acquires(what)}
	h.pending = c
	r.log = append(r.log, fmt.Sprintf("%s: %s%s starts", h.name, desc, note))
	r.calls.Add(1) // under r.mu: a hook's call is not added once finish waits (hooksOn)
	r.mu.Unlock()
	before := r.totalCalls()
	go func() {
		defer r.calls.Done()
		defer close(c.done)
		defer cancelMax()
		err := do(ctx)
		r.mu.Lock()
		h.pending = nil
		if err == nil && c.acquires {
			r.waitedGrant[h.prim] = c.waited
		}
		r.mu.Unlock()
		r.logf("%s: %s returns %v", h.name, c.what, err)
		r.returns.Add(1)
	}()
	// Wait until the call has reached the server or returned, so that the
	// settle after this step sees its requests.
	ctxW, cancelW := context.WithTimeout(context.Background(), 20*time.Millisecond)
	defer cancelW()
	_ = r.srv.Await(ctxW, func() bool {
		select {
		case <-c.done:
			return true
		default:
			return r.totalCalls() != before
		}
	})
}

// cancel cancels h's pending call.
func (r *run) cancel(h *handle) {
	r.mu.Lock()
	c := h.pending
	r.mu.Unlock()
	if c != nil {
		r.logf("%s: cancel %s", h.name, c.what)
		c.cancel()
	}
}

func (r *run) totalCalls() int {
	n := 0
	for _, op := range []queuetest.Op{queuetest.OpEpoch, queuetest.OpCreate, queuetest.OpContainer,
		queuetest.OpChildren, queuetest.OpStat, queuetest.OpGet, queuetest.OpDelete, queuetest.OpWatch,
		queuetest.OpDiscard, queuetest.OpSet} {
		n += r.srv.Calls(op)
	}
	return n
}

// settle waits until the server has been quiet, and no call returned, for
// fuzzQuiet: every pending call waits on a watch or an epoch, every
// goroutine of the holds has done what the last step made it do. A world
// still busy after 2s is left as it is (the checks judge it).
func (r *run) settle() {
	start := time.Now()
	deadline := start.Add(2 * time.Second)
	defer func() {
		if d := time.Since(start); d > 100*time.Millisecond {
			r.logf("(settle took %v)", d)
		}
	}()
	for time.Now().Before(deadline) {
		calls, rets := r.totalCalls(), r.returns.Load()
		hist := len(r.srv.History())
		ctx, cancel := context.WithTimeout(context.Background(), fuzzQuiet)
		err := r.srv.Await(ctx, func() bool {
			return r.totalCalls() != calls || r.returns.Load() != rets || len(r.srv.History()) != hist
		})
		cancel()
		if err != nil && r.returns.Load() == rets {
			return
		}
	}
}

// finish cancels every pending call, releases everything every handle
// holds, and checks that nothing of ours is left on the server.
func (r *run) finish() {
	r.mu.Lock()
	r.hooksOn = false
	r.mu.Unlock()
	for _, h := range r.hs {
		r.cancel(h)
	}
	if !r.waitCalls() {
		return
	}
	for _, c := range r.conns {
		c.NewEpoch()
	}
	r.settle()
	r.logf("release everything")
	for _, h := range r.hs {
		h.releaseAll(r)
	}
	r.settle()
	r.checkLeftovers()
}

// waitCalls waits for every call to return, and fails the run on one that
// does not within fuzzCallMax.
func (r *run) waitCalls() bool {
	done := make(chan struct{})
	go func() { r.calls.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(fuzzCallMax + 5*time.Second):
		r.mu.Lock()
		var hung []string
		for _, h := range r.hs {
			if h.pending != nil {
				hung = append(hung, h.name+": "+h.pending.what)
			}
		}
		r.mu.Unlock()
		r.failf("calls still running after being cancelled: %v", hung)
		r.t.FailNow() // their goroutines are leaked: nothing more is sound
		return false
	}
}

// close ends the sessions and restores the max hold timer.
func (r *run) close() {
	for _, h := range r.hs {
		r.cancel(h)
	}
	r.calls.Wait()
	for _, c := range r.conns {
		c.Close()
	}
	r.restore()
}
