package zklock

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock/internal/queue/queuetest"
)

// FuzzSharedHandles' scheduler (issue 43). Two goroutines of one handle
// race only when one's call runs while the other's is inside a request
// exchange, a window of one round trip; started from separate steps, the
// calls run one after the other (each step waits for its call to block or
// return), and the op 16 hook (a call started at a session's next request
// of a kind) names a request of any call of the session. A scheduled input
// (byte 3's bit 7 set) has chain steps instead: every step whose op byte
// is at least chainOp places up to three calls of one primitive's
// goroutines inside each other's exchanges:
//
//   - lane A (the target) starts op a; at A's request #ka (counted by its
//     ctx: the request is applied, its reply held back), the next lane B
//     of the same primitive starts op b, and A's reply waits until B
//     blocks (the server is quiet) or returns;
//   - with C on, at B's request #kb the lane after B starts op c the same
//     way, inside B's exchange (C is A again on a primitive of two lanes);
//     with C off, each of B's replies is held back until A's call
//     returned (at most slowReply each): B is under way while A goes on;
//   - a call that blocks or returns before its request #k: the next call
//     starts once it blocked or returned;
//   - with hang on, A's ctx ends inside its request #ka's exchange, after
//     B ran: the request was applied, its reply never comes (a release
//     whose ctx ends while its delete's reply is on its way).
//
// B and C are lanes of A's primitive in A's session (its goroutines), or
// the same lane in the next sessions (rivals), as target's bits 6-7 say
// (chainLanes): one step then also makes a rival wait for a holder.
//
// Chain step bytes: op (at least chainOp): bits 0-1 kb (C on), bit 2 C on,
// bit 3 hang; target: bits 0-5 lane A (mod the lanes), 6-7 where B and C are;
// arg: bits 0-1 a, 2-3 b, 4-5 c (chainOps), 6-7 ka.
// The calls of a step are all started before the step ends: no insertion
// is left armed for a later step (a reply of B held back waits for A at
// most slowReply).
const (
	schedBit = 0x80 // byte 3: the input is scheduled
	chainOp  = 0xa0 // a scheduled input's op bytes from here on are chain steps
	chainMax = 300 * time.Millisecond
)

// chainOps are the ops a chain step's 2-bit codes name, by kind: an
// RWMutex's lanes write lock, unlock, downgrade and read lock; the others
// acquire, try, release (and acquire again).
func chainOps(h *handle) []string {
	if h.rw != nil {
		return []string{"acquire", "release", "downgrade", "rlock"}
	}
	return []string{"acquire", "try", "release", "acquire"}
}

// chainNote marks a call a chain step started.
const chainNote = " (chain)"

type tracerKey struct{}

// tracer is a chain call's: its ctx carries it, and the server's observer
// (run.observe) counts the call's requests by it.
type tracer struct {
	n      atomic.Int32
	at     int32              // the request inside whose exchange next runs
	hang   bool               // the call's ctx ends inside request #at's exchange
	hold   *handle            // each reply waits until hold's call returned (no next)
	cancel context.CancelFunc // the call's ctx (hang)
	armed  atomic.Bool        // until next ran: requests past at are left alone
	once   sync.Once
	next   func()
}

// fire runs next once: from the call's request #at, or when the call
// blocked or returned first. It reports whether this caller ran it.
func (tr *tracer) fire() (ran bool) {
	tr.once.Do(func() {
		ran = true
		if tr.next != nil {
			tr.next()
		}
		tr.armed.Store(false)
	})
	return ran
}

// observe is every session's request observer in a scheduled input: a
// chain call's request #at runs the next call inside its exchange.
func (r *run) observe(ctx context.Context, op queuetest.Op, p string, f *queuetest.Fault) {
	tr, _ := ctx.Value(tracerKey{}).(*tracer)
	if tr != nil && tr.hold != nil {
		prev := f.After
		f.After = func() {
			if prev != nil {
				prev()
			}
			r.slow.Add(1) // a reply held back: see run.check
			defer r.slow.Add(-1)
			r.awaitCall(tr.hold, fmt.Sprintf("(its %s %s applied, its reply held back)", op, p))
		}
		return
	}
	if tr == nil || !tr.armed.Load() || tr.n.Add(1)-1 != tr.at {
		return
	}
	prev := f.After
	f.After = func() {
		if prev != nil {
			prev()
		}
		r.slow.Add(1) // a reply held back: see run.check
		defer r.slow.Add(-1)
		r.logf("(its %s %s applied, its reply held back)", op, p)
		// The next call may have started already (insert fires it when
		// this call looked blocked, as it does while a slow reply's hook
		// runs before this one); the ctx ends here all the same: this
		// request hangs (f.Hang), and without the cancel the call would
		// wait for fuzzCallMax with its node gone and its Lost open,
		// which is no state the library can be blamed for.
		tr.fire()
		if tr.hang {
			r.logf("(the chain call's ctx ends: its %s %s gets no reply)", op, p)
			tr.cancel()
		}
	}
	if tr.hang && op != queuetest.OpEpoch && op != queuetest.OpWatch {
		// The reply never comes: the call returns its ctx's error once
		// the ctx ends (a create's node is removed, CreateSeq's contract).
		f.Hang = true
	}
}

// chain runs a chain step (see above).
func (r *run) chain(op, target, arg byte) {
	a := r.hs[int(target&63)%len(r.hs)]
	b, c := r.chainLanes(a, target>>6)
	ops := chainOps(a)
	aw, bw, cw := ops[arg&3], ops[arg>>2&3], ops[arg>>4&3]
	ka, kb := int32(arg>>6), int32(op&3)
	withC, hang := op>>2&1 == 1, op>>3&1 == 1
	desc := fmt.Sprintf("chain: %s %s, at its request #%d %s %s", a.name, aw, ka, b.name, bw)
	trB := &tracer{hold: a}
	if withC {
		desc += fmt.Sprintf(", at its request #%d %s %s", kb, c.name, cw)
		trB = &tracer{at: kb, next: func() { r.insert(c, cw, arg, nil) }}
	} else {
		desc += ", its replies held back"
	}
	if hang {
		desc += fmt.Sprintf("; %s's ctx ends at its request #%d", a.name, ka)
	}
	r.logf("%s", desc)
	trA := &tracer{at: ka, hang: hang, next: func() { r.insert(b, bw, arg, trB) }}
	r.insert(a, aw, arg, trA)
}

// chainLanes returns a chain's B and C lanes for A by mode: 0 and 3 the
// next lanes of A's primitive in A's session (C is A on a primitive of two
// lanes), 1 A's lane in the next session and the one after, 2 A's lane in
// the next session and that lane's next one.
func (r *run) chainLanes(a *handle, mode byte) (b, c *handle) {
	sibs := r.lanes(a)
	i := slices.Index(r.hs, a)
	rival := func(d int) *handle { return r.hs[(i+d*perSession)%len(r.hs)] }
	switch mode {
	case 1:
		return rival(1), rival(2)
	case 2:
		b = rival(1)
		return b, r.lanes(b)[1]
	}
	return sibs[1%len(sibs)], sibs[2%len(sibs)]
}

// lanes returns the lanes of h's primitive in its session, h first.
func (r *run) lanes(h *handle) []*handle {
	var out []*handle
	for _, x := range r.hs {
		if x.prim == h.prim {
			out = append(out, x)
		}
	}
	i := slices.Index(out, h)
	return append(out[i:], out[:i]...)
}

// insert starts what on h with tr in its ctx, and waits until the call
// returned or blocks; then, unless the call's request #tr.at came first,
// it runs tr's next call.
func (r *run) insert(h *handle, what string, arg byte, tr *tracer) {
	ctx, cancel := context.WithCancel(context.Background())
	if tr != nil {
		tr.cancel = cancel
		tr.armed.Store(true)
		ctx = context.WithValue(ctx, tracerKey{}, tr)
	}
	r.startCtx(h, what, arg, ctx, cancel, chainNote)
	r.mu.Lock()
	c := h.pending
	r.mu.Unlock()
	if c != nil {
		r.awaitBlocked(c.done)
	}
	if tr != nil {
		tr.fire()
	}
}

// awaitCall waits until h's pending call returns, at most slowReply, and
// logs note if it waits.
func (r *run) awaitCall(h *handle, note string) {
	r.mu.Lock()
	c := h.pending
	r.mu.Unlock()
	if c == nil {
		return
	}
	r.logf("%s", note)
	t := time.NewTimer(slowReply)
	defer t.Stop()
	select {
	case <-c.done:
	case <-t.C:
	}
}

// awaitBlocked waits until done closes or the server has been quiet for
// fuzzQuiet (the call waits on a watch, in its handle, or on a reply held
// back), at most chainMax.
func (r *run) awaitBlocked(done <-chan struct{}) {
	deadline := time.Now().Add(chainMax)
	for time.Now().Before(deadline) {
		calls, hist := r.totalCalls(), len(r.srv.History())
		ctx, cancel := context.WithTimeout(context.Background(), fuzzQuiet)
		err := r.srv.Await(ctx, func() bool {
			select {
			case <-done:
				return true
			default:
			}
			return r.totalCalls() != calls || len(r.srv.History()) != hist
		})
		cancel()
		select {
		case <-done:
			return
		default:
		}
		if err != nil {
			return
		}
	}
}
