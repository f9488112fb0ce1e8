package zklock

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue/queuetest"
	"go.uber.org/goleak"
)

// FuzzSharedHandles is FuzzHolds with goroutines sharing handles (issue
// 43): each primitive of a session is driven by several lanes, each a
// goroutine of the same handle with at most one call pending, so that two
// Locks of one Mutex, a TryLock beside a ReentrantMutex owner's Lock, or
// an Unlock beside a Downgrade run at once. The primitives: a Mutex (/m,
// with an option), a Mutex WithSequenceLayout (/sq), a ReentrantMutex of
// one owner (/re), an RWMutex (/rw), a Semaphore of 2 in each layout (/sl,
// /sp), an Election (/el) and a MultiLock (/ml/a and /rw). Its operations
// are FuzzHolds' (epoch ends, expiry, bounds, Break, Revoke, Downgrade,
// lost requests, cancellations), and a call started by a hook at a chosen
// request of a session (op 16: in the middle of another call's exchange,
// the reply to its own first request slow), a slow reply (17), a bound
// passed (18), an epoch's end (19).
//
// Beyond FuzzHolds' checks (which it shares: fuzz_check_internal_test.go)
// it relies on two that concurrency needs: a call returns success only for
// a hold whose loss did not come first (run.admit), and a ReentrantMutex,
// one owner, never has two nodes in its queue (run.ownerNodes). After the
// run nothing may be left on the server, and no goroutine.
//
// A scheduled input (byte 3's bit 7) has chain steps too: calls of one
// primitive's goroutines placed inside each other's request exchanges,
// and a call's ctx ended inside one (fuzz_sched_internal_test.go): the
// interleavings of findings 2 and 3 are one or two steps there.
//
// Input: bytes 0-3 the options (sharedOptions), then 3 bytes a step: an
// operation, a target (a lane; its session is target%3) and an argument.
func FuzzSharedHandles(f *testing.F) {
	seeds := sharedSeeds
	if os.Getenv("FUZZSHARED_SCRATCH") != "" {
		// A measurement of how long the fuzzer takes to find issue 43's
		// findings from scratch: none of the seeds that reproduce them
		// (and move testdata/fuzz/FuzzSharedHandles aside).
		seeds = sharedWalks
	} else {
		seeds = append(slices.Clone(seeds), sharedWalks...)
	}
	for _, seed := range seeds {
		f.Add(seed)
	}
	f.Fuzz(runShared)
}

// runShared runs one input of FuzzSharedHandles.
func runShared(t *testing.T, in []byte) {
	if len(in) < 4 {
		return
	}
	if in[3]&focusBit == 0 {
		runWorld(t, in, -1, time.Time{})
		return
	}
	// A focused input runs on each primitive in turn, each in a world of
	// its own (fuzz_focus_internal_test.go).
	// The fuzzer takes an input running 10s for a hang: the worlds stop
	// taking steps after focusBudget.
	deadline := time.Now().Add(focusBudget)
	for k := range focusKinds {
		if time.Now().After(deadline) {
			return
		}
		if runWorld(t, in, k, deadline); t.Failed() {
			return
		}
	}
}

// focusBudget bounds the steps of a focused input's worlds.
const focusBudget = 4 * time.Second

// runWorld runs in in a new world, focused on focusKinds[focus] (-1: not
// focused), taking no step after deadline (zero: none).
func runWorld(t *testing.T, in []byte, focus int, deadline time.Time) {
	base := goleak.IgnoreCurrent()
	r := newRun(t, in[:4], newSharedHandles)
	r.admins = sharedAdminPaths
	r.hooksOn = true
	r.sched, r.focused, r.focus = in[3]&schedBit != 0, focus >= 0, focus
	if r.sched || r.focused {
		for _, c := range r.conns {
			c.Observe(r.observe)
		}
	}
	defer func() {
		r.close()
		if err := goleak.Find(base); err != nil {
			t.Errorf("goroutines left after the run: %v", err)
		}
	}()
	steps, most := in[4:], fuzzMaxSteps
	if r.focused {
		steps, most = unmask(in), focusMaxSteps
	}
	for i := 0; i+3 <= len(steps) && i/3 < most; i += 3 {
		if !deadline.IsZero() && time.Now().After(deadline) {
			r.logf("(the input's time is up)")
			break
		}
		if r.focused {
			r.stepFocused(steps[i], steps[i+1], steps[i+2])
		} else {
			r.stepShared(steps[i], steps[i+1], steps[i+2])
		}
		r.settle()
		r.mu.Lock()
		for _, h := range r.hs {
			if h.pending != nil {
				h.pending.waited = true
			}
		}
		r.mu.Unlock()
		if r.focused {
			r.markShape()
		}
		r.check()
	}
	r.finish()
	if testing.Verbose() && os.Getenv("FUZZHOLDS_LOG") != "" {
		t.Logf("steps:\n  %s", strings.Join(r.log, "\n  "))
	}
}

var sharedAdminPaths = []string{"/m", "/re", "/rw", "/ml/a", "/el", "/sq"}

// hookNote marks a call a request's hook started.
const hookNote = " (hooked)"

// hookWhat are the calls a hook starts.
var hookWhat = []string{"release", "runlock", "acquire", "try", "downgrade"}

// stepShared decodes and starts one operation (see FuzzSharedHandles).
func (r *run) stepShared(op, target, arg byte) {
	if r.sched && op >= chainOp {
		r.chain(op, target, arg)
		return
	}
	switch op % 20 {
	case 17:
		// A slow reply: the request is applied, its reply held until
		// another call returns (at most slowReply).
		si := int(target) % fuzzSessions
		fo := faultOps[int(arg)%len(faultOps)]
		r.logf("session %d: the reply to its next %s is slow", si, fo)
		r.conns[si].Inject(fo, queuetest.Fault{After: r.awaitReturn})
	case 16:
		h := r.hs[int(target)%len(r.hs)]
		fo := faultOps[int(arg)%len(faultOps)]
		what := hookWhat[int(arg)/len(faultOps)%len(hookWhat)]
		r.logf("session %d: at its next %s, %s starts %s", h.sess, fo, h.name, what)
		r.conns[h.sess].Inject(fo, queuetest.Fault{After: func() {
			// The started call's first request is applied at once, its
			// reply slow: both calls are under way together.
			first := queuetest.OpCreate
			if what == "release" || what == "runlock" {
				first = queuetest.OpDelete
			}
			r.conns[h.sess].Inject(first, queuetest.Fault{After: r.awaitReturn})
			ctx, cancel := context.WithCancel(context.Background())
			r.startCtx(h, what, arg, ctx, cancel, hookNote)
		}})
	case 18:
		r.passBound(int(arg))
	case 19:
		si := int(target) % fuzzSessions
		c := r.conns[si]
		r.fault(fmt.Sprintf("end epoch of session %d", si), c.EndEpoch)
		c.NewEpoch()
	default:
		r.step(op, target, arg)
	}
}

// slowReply bounds a slow reply (op 17).
const slowReply = 100 * time.Millisecond

// awaitReturn waits until a call returns, at most slowReply. A call's
// return is no change on the server: it is polled.
func (r *run) awaitReturn() {
	r.slow.Add(1)
	defer r.slow.Add(-1)
	rets, start := r.returns.Load(), time.Now()
	for r.returns.Load() == rets && time.Since(start) < slowReply {
		time.Sleep(100 * time.Microsecond)
	}
}

// lanesOf are how many goroutines drive each primitive of a session.
const lanesOf = 3

// newSharedHandles makes session si's primitives, each as lanes: handles
// that share it. opts[si] gives the options of the Mutex (bits 0-1), the
// ReentrantMutex (2-3) and the RWMutex (4-5) (fuzzOption); opts[3]'s bit
// si a max hold to the MultiLock's /ml/a.
func newSharedHandles(t *testing.T, r *run, si int, opts []byte) []*handle {
	s, b := r.sess[si], opts[si]
	must := func(err error) {
		if err != nil {
			t.Fatal(err)
		}
	}
	var hs []*handle
	lanes := func(kind string, n int, h handle) {
		h.sess, h.prim = si, h.primitive()
		for i := range n {
			l := h
			l.name = fmt.Sprintf("s%d.%s#%d", si, kind, i)
			hs = append(hs, &l)
		}
	}
	m, err := NewMutex(s, "/m", fuzzOption(b, false)...)
	must(err)
	lanes("mutex", lanesOf, handle{m: m})
	sq, err := NewMutex(s, "/sq", WithSequenceLayout())
	must(err)
	lanes("seq", 2, handle{m: sq})
	re, err := NewReentrantMutex(s, "/re", fuzzOption(b>>2, false)...)
	must(err)
	lanes("reentrant", lanesOf, handle{re: re})
	rw, err := NewRWMutex(s, "/rw", fuzzOption(b>>4, true)...)
	must(err)
	lanes("rw", lanesOf, handle{rw: rw})
	sl, err := NewSemaphore(s, "/sl", 2)
	must(err)
	lanes("leases", 2, handle{sem: sl})
	sp, err := NewSemaphore(s, "/sp", 2, WithPermitLayout())
	must(err)
	lanes("permits", 2, handle{sem: sp})
	el, err := NewElection(s, "/el")
	must(err)
	lanes("election", 2, handle{el: el})
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
	lanes("multilock", 2, handle{ml: ml})
	return hs
}

// A lane is target session*19 + index in the session: 0-2 the Mutex, 3-4
// the sequence-layout Mutex, 5-7 the ReentrantMutex, 8-10 the RWMutex,
// 11-12 and 13-14 the Semaphores, 15-16 the Election, 17-18 the MultiLock;
// the session of a fault is target%3. s1.x is 19+x, s2.x 38+x.
const perSession = 19

// sharedSeeds are FuzzSharedHandles' hand-written seeds that reproduce
// issue 43's findings 1-3 on the code before their fixes (1e504b7), and
// the review's open findings the scheduler found on a1f70de.
var sharedSeeds = [][]byte{
	// 1, bound: s0's Mutex (max hold) is locked by lane 0, lane 1 queues,
	// s1's Mutex queues; lane 0's bound passes (lane 1 is granted and waits
	// in the handle), then lane 1's (s1 holds); lane 2 unlocks lane 0's.
	seed(0x01, 0, 0, 0, st(0, 0, 0), st(0, 1, 0), st(0, perSession, 0), st(18, 0, 0), st(18, 0, 0), st(2, 2, 0)),
	// 1, epoch: the same with s0's epoch ending twice.
	seed(0, 0, 0, 0, st(0, 0, 0), st(0, 1, 0), st(19, 0, 0), st(0, perSession, 0), st(19, 0, 0), st(2, 2, 0)),
	// 1, an RWMutex's write lock (max hold).
	seed(0x10, 0, 0, 0, st(0, 8, 0), st(0, 9, 0), st(0, perSession+8, 0), st(18, 0, 0), st(18, 0, 0), st(2, 10, 0)),
	// 2: s0's writer waited for s1's and holds, s2's writer queues; at
	// s0's next stat (Downgrade's read of the write node), lane 1 unlocks
	// (the reply to its delete slow); lane 0 downgrades.
	seed(0, 0, 0, 0, st(0, perSession+8, 0), st(0, 8, 0), st(2, perSession+8, 0), st(0, 2*perSession+8, 0),
		st(16, 9, 5), st(5, 8, 0)),
	// 3: s1's owner holds /re; s0's owner Locks (waits), TryLocks (refused),
	// Locks again.
	seed(0, 0, 0, 0, st(0, perSession+5, 0), st(0, 5, 0), st(1, 6, 0), st(0, 7, 0), st(2, perSession+5, 0)),
	// 2, scheduled: the same, the Unlock placed by a chain step: s0's
	// lane 0 downgrades; at its request #1 (the stat of the write node)
	// lane 1 unlocks, the reply to its delete held back until the
	// Downgrade returned.
	seed(0, 0, 0, schedBit, st(0, perSession+8, 0), st(0, 8, 0), st(2, perSession+8, 0), st(0, 2*perSession+8, 0),
		st(chainOp, 8, 0x46)),
	// 2, scheduled in three steps: a chain step makes s1's writer hold,
	// then s2's and s0's writers queue (rivals: target bits 6-7 = 1); s1
	// unlocks (s2 holds, after waiting); a chain step as above on s2.
	seed(0, 0, 0, schedBit, st(chainOp|7, 0x40|(perSession+8), 0xc0), st(2, perSession+8, 0),
		st(chainOp, 2*perSession+8, 0x46)),
	// 3, scheduled: s1's owner holds /re; a chain step: s0's lane 0
	// Locks; once it waits, lane 1 TryLocks, and once that returned,
	// lane 2 Locks.
	seed(0, 0, 0, schedBit, st(0, perSession+5, 0), st(chainOp|7, 5, 0xc4)),
	// Found with the scheduler on a1f70de (fixed since, h43fix): a Mutex
	// holder (s0) with s1's queued; lane 1 Unlocks, its ctx ends inside
	// its delete's exchange (applied, no reply): the handle must not hold
	// with Lost open while s1 holds.
	seed(0, 0, 0, schedBit, st(0, 0, 0), st(0, perSession, 0), st(chainOp|8, 1, 0x06)),
	// The same on a ReentrantMutex, then a re-entry: it must not return
	// nil while s1 holds.
	seed(0, 0, 0, schedBit, st(0, 5, 0), st(0, perSession+5, 0), st(chainOp|8, 6, 0x06), st(0, 7, 0)),
	// s0's owner holds /re; s1 Breaks it (force); s1's owner holds; s0's
	// owner re-enters: not nil.
	seed(0, 0, 0, 0, st(0, 5, 0), st(10, 1, 7), st(0, perSession+5, 0), st(0, 6, 0)),
	// Review 43m (its seed S): s0's owner holds /re; lane 1 Unlocks while
	// a re-entry runs (the chain step at request #6). The library passes;
	// with an Unlock that releases without the ReentrantMutex's lock (its
	// mutation M9) the re-entry returns nil for a hold whose release had
	// begun, which the model must report, not excuse as a sibling's.
	seed(0, 0, 0, schedBit, st(0, 5, 0), st(chainOp, 6, 0x08)),
	seed(0, 0, 0, schedBit, st(0, 5, 0), st(chainOp, 6, 0x48)),
}

// sharedWalks are FuzzSharedHandles' seeds that reproduce no finding: the
// corpus a measurement from scratch starts with (FUZZSHARED_SCRATCH).
var sharedWalks = [][]byte{
	// A walk: sequence-layout Mutex lanes, semaphores, a MultiLock whose
	// part's bound passes, Break and Revoke, an expiry.
	seed(0x05, 0x02, 0x20, 0x01, st(0, 3, 0), st(0, 4, 0), st(0, perSession+3, 0), st(10, 0, 11), st(2, 4, 0),
		st(0, 11, 1), st(0, 12, 0), st(0, 17, 0), st(0, 18, 0), st(18, 0, 1), st(11, 1, 0), st(2, 17, 0),
		st(9, 1, 1), st(0, 6, 0), st(0, 5, 0), st(2, 7, 0), st(2, 6, 0), st(19, 2, 0)),
	// A scheduled walk: chain steps on a Mutex (Lock inside a Lock's
	// create, an Unlock held back), a Semaphore, an Election and a
	// MultiLock, between plain steps and faults.
	seed(0x01, 0, 0, schedBit, st(chainOp, 0, 0x40), st(0, perSession, 0), st(chainOp|1, 1, 0x0a),
		st(chainOp|4, 11, 0x18), st(0, perSession+11, 0), st(chainOp, 15, 0x08), st(18, 0, 0),
		st(chainOp|3, 17, 0xc8), st(12, 1, 0), st(2, 11, 0), st(2, 12, 0)),
	// A focused input (fuzz_focus_internal_test.go): a random program of
	// 12 steps, on each primitive (two others tried, of 0xff, 0xfe, ...
	// with a max hold, and of zeros, reproduce finding 3 and another on
	// 1e504b7: they are not seeds).
	{0, 0, 0, focusBit, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 24,
		25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36},
}
