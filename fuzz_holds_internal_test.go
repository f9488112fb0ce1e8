package zklock

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// FuzzHolds is the model-based fuzz target of issue 36 (item 6). Its input
// decodes to operations on every primitive (Mutex, ReentrantMutex, RWMutex
// with downgrade, Semaphore in both layouts, Election, MultiLock) with
// every option (WithMaxHold, WithRevocable and Revoke, WithCohort, Break)
// and every fault of the in-memory server (session expiry, an epoch's end,
// a reply lost, a request lost, a ctx cancelled at a chosen request),
// run by 3 sessions on shared paths. After every step the model's checks
// run (fuzz_check_internal_test.go); a failure prints the steps so far.
//
// Input: byte 0-3 choose the handles' options (fuzzOptions), then each
// step is 3 bytes: an operation, a target (handle, session or path) and
// an argument. At most fuzzMaxSteps steps run.
//
// Every step is bounded: a blocking call runs on a goroutine and stays
// pending while it waits (one per handle); a step ends when the server has
// been quiet for fuzzQuiet (settle). Pending calls are cancelled at the
// end, everything is released, and nothing of ours may be left.
func FuzzHolds(f *testing.F) {
	for _, seed := range fuzzSeeds {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		if len(in) < 4 {
			return
		}
		r := newRun(t, in[:4], newHandles)
		defer r.close()
		steps := in[4:]
		for i := 0; i+3 <= len(steps) && i/3 < fuzzMaxSteps; i += 3 {
			r.step(steps[i], steps[i+1], steps[i+2])
			r.settle()
			r.check()
		}
		r.finish()
		if testing.Verbose() && os.Getenv("FUZZHOLDS_LOG") != "" {
			t.Logf("steps:\n  %s", strings.Join(r.log, "\n  "))
		}
	})
}

const (
	fuzzMaxSteps = 40
	fuzzQuiet    = 2 * time.Millisecond
	fuzzCallMax  = 20 * time.Second // a call still running then has hung
	fuzzSessions = 3
)

// run is one input's world: the server, the sessions, the handles and what
// the model believes each holds.
type run struct {
	t     *testing.T
	srv   *queuetest.Server
	conns []*queuetest.Conn
	sess  []*Session
	hs    []*handle

	mu       sync.Mutex // guards the fields below, the handles' beliefs and pending calls
	log      []string
	lastTok  map[string]int64
	bounds   []chan time.Time // max hold timers, in start order
	fired    []bool
	failed   bool
	applying atomic.Bool  // a fault is being applied: returns now are not judged
	gen      atomic.Int64 // odd while a fault and its effects are under way; bumped at each edge
	hooksOn  bool         // a request's hook may start a call (FuzzSharedHandles, until finish)
	sched    bool         // a scheduled input: chain steps (fuzz_sched_internal_test.go)
	returns  atomic.Int64
	calls    sync.WaitGroup
	restore  func()          // the max holds' timer
	admins   []string        // the paths Revoke and Break choose from (nil: adminPaths)
	slow     atomic.Int32    // replies held back now (FuzzSharedHandles' slow replies)
	excused  map[string]bool // nodes a Break deleted while a reply was held back; r.mu

	// FuzzSharedHandles' focused inputs (fuzz_focus_internal_test.go).
	focused     bool
	focus       int          // the focused primitive (focusKinds)
	waitedGrant map[any]bool // a primitive's last grant came after a wait; r.mu
	shapes      [24]int      // markShape's
}

func newRun(t *testing.T, opts []byte, handles func(*testing.T, *run, int, []byte) []*handle) *run {
	r := &run{t: t, srv: queuetest.NewServer(), lastTok: map[string]int64{}, waitedGrant: map[any]bool{}}
	r.restore = setBoundTimer(func(time.Duration) (<-chan time.Time, func() bool) {
		ch := make(chan time.Time, 1)
		r.mu.Lock()
		r.bounds, r.fired = append(r.bounds, ch), append(r.fired, false)
		r.mu.Unlock()
		return ch, func() bool { return true }
	})
	for i := range fuzzSessions {
		c := r.srv.Connect()
		s := fakeSession()
		s.qc = c
		r.conns, r.sess = append(r.conns, c), append(r.sess, s)
		r.hs = append(r.hs, handles(t, r, i, opts)...)
	}
	return r
}

// logf records a step's line for the failure report.
func (r *run) logf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.log = append(r.log, fmt.Sprintf(format, args...))
}

// failf reports a violation with the steps so far; the run goes on to its
// cleanup, which must still leave nothing behind.
//
// For a measurement (how long the fuzzer takes to find one kind of
// violation), FUZZHOLDS_ONLY counts only violations whose message holds
// it, FUZZHOLDS_SKIP none that hold it, FUZZHOLDS_STEPS only those whose
// steps so far hold it; the others are logged only.
func (r *run) failf(format string, args ...any) {
	msg := fmt.Sprintf(format, args...)
	only, skip := os.Getenv("FUZZHOLDS_ONLY"), os.Getenv("FUZZHOLDS_SKIP")
	r.mu.Lock()
	steps := os.Getenv("FUZZHOLDS_STEPS") // and a part of the steps so far
	inSteps := steps == "" || strings.Contains(strings.Join(r.log, "\n"), steps)
	r.mu.Unlock()
	if (only != "" && !strings.Contains(msg, only)) || (skip != "" && strings.Contains(msg, skip)) || !inSteps {
		r.logf("(violation not counted: %s)", msg)
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.failed = true
	r.t.Errorf("violation: %s\nsteps:\n  %s", msg, strings.Join(r.log, "\n  "))
}

// faultOps are the requests a cancellation may come at.
var faultOps = []queuetest.Op{queuetest.OpCreate, queuetest.OpChildren, queuetest.OpGet,
	queuetest.OpDelete, queuetest.OpWatch, queuetest.OpStat, queuetest.OpContainer, queuetest.OpEpoch}

// step decodes and starts one operation.
func (r *run) step(op, target, arg byte) {
	h := r.hs[int(target)%len(r.hs)]
	si := int(target) % fuzzSessions
	c := r.conns[si]
	switch op % 16 {
	case 0:
		r.start(h, "acquire", arg)
	case 1:
		r.start(h, "try", arg)
	case 2:
		r.start(h, "release", arg)
	case 3:
		r.start(h, "rlock", arg)
	case 4:
		r.start(h, "tryrlock", arg)
	case 5:
		r.start(h, "downgrade", arg)
	case 6:
		r.start(h, "runlock", arg)
	case 7:
		r.cancel(h)
	case 8:
		r.passBound(int(arg))
	case 9, 10:
		r.admin(op%16 == 10, si, int(arg))
	case 11:
		r.fault(fmt.Sprintf("expire session %d", si), c.Expire)
	case 12:
		r.fault(fmt.Sprintf("end epoch of session %d", si), c.EndEpoch)
		r.settle()
		c.NewEpoch()
	case 13, 14:
		// What the session machine lets through of a connection loss: a
		// create's reply lost (applied) or its request lost, a watch not
		// set again. It retries every other request, within the epoch.
		f, what := queuetest.Fault{Err: client.ErrConnectionLoss}, "create: reply lost"
		switch {
		case arg%2 == 1:
			f, what = queuetest.Fault{Lost: true}, "watch: not set again"
		case op%16 == 14:
			f, what = queuetest.Fault{Lost: true}, "create: request lost"
		}
		r.logf("session %d: next %s", si, what)
		c.Inject(map[bool]queuetest.Op{false: queuetest.OpCreate, true: queuetest.OpWatch}[arg%2 == 1], f)
	case 15:
		// An acquisition whose ctx a fault hook cancels at the handle's
		// session's next request of the kind arg chooses.
		fo := faultOps[int(arg)%len(faultOps)]
		ctx, cancel := context.WithCancel(context.Background())
		r.conns[h.sess].Inject(fo, queuetest.Fault{Before: cancel})
		r.startCtx(h, "acquire", arg/8, ctx, cancel, fmt.Sprintf(" cancelled at next %s", fo))
	}
}

// fault applies a change to the server outside any call, marked so that
// calls returning meanwhile are not judged on a race with it. The mark
// lasts until the change's effects are over (settle): a bound's loss
// signal is closed by a goroutine a moment after its timer fires.
func (r *run) fault(what string, apply func()) {
	if what != "" {
		r.logf("%s", what)
	}
	r.gen.Add(1)
	r.applying.Store(true)
	apply()
	r.settle()
	r.applying.Store(false)
	r.gen.Add(1)
}

// passBound fires a max hold's timer not fired yet.
func (r *run) passBound(arg int) {
	r.mu.Lock()
	var open []int
	for i, f := range r.fired {
		if !f {
			open = append(open, i)
		}
	}
	if len(open) == 0 {
		r.mu.Unlock()
		return
	}
	i := open[arg%len(open)]
	r.fired[i] = true
	ch := r.bounds[i]
	r.mu.Unlock()
	r.fault(fmt.Sprintf("bound %d passes", i), func() { ch <- time.Now() })
}

// excuse records the nodes a Break deleted while a reply was held back:
// a call whose create or listing was answered before the Break but whose
// reply arrives after it holds a deleted node, and no client can see that
// without another round trip, which has the same window (Break's doc:
// only fencing protects the resource then). A hold found on such a node
// is counted as broken, not judged.
func (r *run) excuse(broken []Contender) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.excused == nil {
		r.excused = map[string]bool{}
	}
	for _, c := range broken {
		r.excused[c.Path] = true
	}
}

var adminPaths = []string{"/m", "/re", "/rw", "/ml/a", "/el"}

// admin runs Revoke or Break (force when arg is odd) from session si.
func (r *run) admin(brk bool, si, arg int) {
	paths := r.admins
	if paths == nil {
		paths = adminPaths
	}
	p := paths[arg%len(paths)]
	ctx, cancel := context.WithTimeout(context.Background(), fuzzCallMax)
	defer cancel()
	if !brk {
		r.fault("", func() {
			out, err := Revoke(ctx, r.sess[si], p)
			r.logf("session %d: Revoke %s: %v %v", si, p, out, err)
		})
		return
	}
	force := arg/len(paths)%2 == 1
	var out []Contender
	var err error
	r.fault("", func() {
		slow := r.slow.Load() > 0
		out, err = Break(ctx, r.sess[si], p, force)
		if slow = slow || r.slow.Load() > 0; slow {
			r.excuse(out)
		}
	})
	r.logf("session %d: Break %s force=%v: %d broken, %v", si, p, force, len(out), err)
	r.markBroken(p)
}
