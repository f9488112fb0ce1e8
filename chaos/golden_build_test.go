package chaos_test

import (
	"time"

	"github.com/zklock/zklock/chaos"
)

// history builds a synthetic run of 20s for the golden tests: events in
// log order, receipts numbered in commit order (Seq within a primitive,
// Zxid across them), the final counters.
type history struct {
	o    chaos.Outcome
	zxid int64
}

func newHistory() *history {
	return &history{o: chaos.Outcome{Start: 0, Stop: 20_000 * ms, Limit: 2, SessionTimeout: 2 * time.Second,
		Receipts: map[string][]chaos.Receipt{}, Counters: map[string]int64{}, Nodes: map[string]chaos.NodeLife{}}}
}

// h is one hold: wait at Wait (none if 0), acquire at From, belief ended
// at To for Why (none logged if Why is ""). Times in ms; Dl is the deadline
// logged at the acquire.
type h struct {
	Proc, Prim, Mode, Lib, Node string
	Tok, Wait, From, Dl, To     int64
	Why                         string
}

func (b *history) add(e chaos.Event) *history { b.o.Events = append(b.o.Events, e); return b }

// acquire logs h's wait and acquire.
func (b *history) acquire(x h) *history {
	if x.Wait != 0 {
		b.add(chaos.Event{Ev: chaos.EvWait, Proc: x.Proc, Prim: x.Prim, Lib: x.Lib, T: x.Wait * ms})
	}
	return b.add(chaos.Event{Ev: chaos.EvAcquire, Proc: x.Proc, Prim: x.Prim, Lib: x.Lib, Mode: x.Mode, Tok: x.Tok,
		T: x.From * ms, Dl: x.Dl * ms, Node: x.Node})
}

// release logs the end of h's belief.
func (b *history) release(x h) *history {
	return b.add(chaos.Event{Ev: chaos.EvRelease, Proc: x.Proc, Prim: x.Prim, Lib: x.Lib, Mode: x.Mode, Tok: x.Tok,
		T: x.To * ms, Res: x.Why})
}

// hold logs h whole.
func (b *history) hold(x h) *history { return b.acquire(x).release(x) }

// w is one write of hold H: write id W setting the counter to V, sent at
// At, its reply at Reply (At+10 if 0), with deadline Dl logged.
type w struct {
	H            h
	W, V, At, Dl int64
	Reply        int64
	Res          string
}

func (b *history) write(x w) *history {
	if x.Reply == 0 {
		x.Reply = x.At + 10
	}
	return b.add(chaos.Event{Ev: chaos.EvWrite, Proc: x.H.Proc, Prim: x.H.Prim, Lib: x.H.Lib, Tok: x.H.Tok, W: x.W, V: x.V,
		T: x.At * ms, T1: x.Reply * ms, Res: x.Res, Dl: x.Dl * ms})
}

// commit appends x's receipt, next in commit order, and sets the counter.
func (b *history) commit(x w) *history {
	b.zxid++
	rs := b.o.Receipts[x.H.Prim]
	b.o.Receipts[x.H.Prim] = append(rs, chaos.Receipt{Seq: int64(len(rs)), Zxid: 0x100000000 + b.zxid,
		Proc: x.H.Proc, W: x.W, Tok: x.H.Tok, V: x.V})
	b.o.Counters[x.H.Prim] = x.V
	return b
}

func (b *history) fault(kind, target string, from, to int64) *history {
	b.o.Faults = append(b.o.Faults, chaos.Fault{Kind: kind, Target: target, Start: from * ms, End: to * ms})
	return b
}

func (b *history) conn(proc, lib, state string, at int64) *history {
	return b.add(chaos.Event{Ev: chaos.EvConn, Proc: proc, Lib: lib, T: at * ms, Res: state})
}

func (b *history) node(path string, seen, gone int64) *history {
	b.o.Nodes[path] = chaos.NodeLife{Seen: seen * ms, Gone: gone * ms}
	return b
}

func (b *history) outcome() *chaos.Outcome { return &b.o }

const (
	lockDir  = "/chaos-1/locks/"
	curNode1 = lockDir + "mutex/_c_6f1e-lock-0000000001"
)

// A zklock mutex holder frozen from 1.2s to 4.7s; its loss fires 5ms after
// it is resumed. The checker before issue 33 excused any rival granted once
// the freeze had begun.
func frozenHolder(rivalAt int64) (*history, h, h) {
	a := h{Proc: "w1.1", Prim: "mutex", Mode: "w", Tok: 10, Wait: 900, From: 1000, To: 4705, Why: chaos.WhyLost}
	r := h{Proc: "w2.1", Prim: "mutex", Mode: "w", Tok: 20, Wait: 1000, From: rivalAt, To: rivalAt + 200, Why: chaos.WhyReleased}
	b := newHistory().fault(chaos.FaultPause, a.Proc, 1200, 4700)
	return b, a, r
}

// goldenFrozenRivalEarly: issue 33, excuse 1 — a rival granted 100ms into a
// 2s-session holder's freeze. No server expires a session that soon.
func goldenFrozenRivalEarly() *chaos.Outcome {
	b, a, r := frozenHolder(1300)
	wa := w{H: a, W: 1, V: 1, At: 1100, Res: chaos.ResOK}
	wr := w{H: r, W: 1, V: 2, At: 1400, Res: chaos.ResOK}
	return b.acquire(a).write(wa).commit(wa).release(a).acquire(r).write(wr).commit(wr).release(r).outcome()
}

// goldenFrozenLongBelief: issue 33, excuse 1 — frozen 3.5s, then believing
// 2.8s after it was resumed, its loss 700ms after the rival acquired.
func goldenFrozenLongBelief() *chaos.Outcome {
	b, a, r := frozenHolder(6800)
	a.To = 7500
	wa := w{H: a, W: 1, V: 1, At: 1100, Res: chaos.ResOK}
	wr := w{H: r, W: 1, V: 2, At: 6900, Res: chaos.ResOK}
	return b.acquire(a).write(wa).commit(wa).release(a).acquire(r).write(wr).commit(wr).release(r).outcome()
}

// goldenFencedByCommitOrder: issue 33, excuse 1 — the frozen holder's write
// was sent before the freeze and committed after the rival acquired: a
// write of another primitive, sent after the rival acquired, committed
// before it (receipt zxids). Judged by send time it looked fenced.
func goldenFencedByCommitOrder() *chaos.Outcome {
	b, a, r := frozenHolder(3500)
	e := h{Proc: "w3.1", Prim: "election", Mode: "w", Tok: 30, Wait: 3000, From: 3590, To: 3700, Why: chaos.WhyReleased}
	w1 := w{H: a, W: 1, V: 1, At: 1050, Res: chaos.ResOK}
	w2 := w{H: a, W: 2, V: 2, At: 1150, Reply: 4710, Res: chaos.ResUnknown}
	we := w{H: e, W: 1, V: 1, At: 3600, Res: chaos.ResOK}
	return b.acquire(a).write(w1).write(w2).release(a).hold(r).acquire(e).write(we).release(e).
		commit(w1).commit(we).commit(w2).outcome()
}

// goldenFrozenBeforeDeadline: the frozen holder had logged an ownership
// deadline of 2.8s; the rival acquired at 2.7s, 1.5s into the freeze.
func goldenFrozenBeforeDeadline() *chaos.Outcome {
	b, a, r := frozenHolder(2700)
	a.Dl = 2600
	wa := w{H: a, W: 1, V: 1, At: 1150, Dl: 2800, Res: chaos.ResOK}
	wr := w{H: r, W: 1, V: 2, At: 2750, Res: chaos.ResOK}
	return b.acquire(a).write(wa).commit(wa).release(a).acquire(r).write(wr).commit(wr).release(r).outcome()
}

// goldenFrozenLegit is the control: the rival 2.1s into the freeze, after
// the holder's deadline, the holder's loss 5ms after it was resumed and its
// one write after that refused. Every checker must pass it.
func goldenFrozenLegit() *chaos.Outcome {
	b, a, r := frozenHolder(3300)
	a.Dl = 2600
	wa := w{H: a, W: 1, V: 1, At: 1100, Dl: 2700, Res: chaos.ResOK}
	late := w{H: a, W: 2, V: 2, At: 4702, Dl: 2700, Res: chaos.ResRejected}
	wr := w{H: r, W: 1, V: 2, At: 3400, Res: chaos.ResOK}
	return b.acquire(a).write(wa).commit(wa).write(late).release(a).acquire(r).write(wr).commit(wr).release(r).outcome()
}
