package chaos_test

import "github.com/zklock/zklock/chaos"

// goldenLateCommit: issue 33, deliver 4 — w1.1's write sent at 1.09s,
// before its release, committed after w2.1 had been granted the mutex at
// 1.2s: an election write sent at 1.25s committed before it. The counter
// shows nothing (w2.1 wrote after it), but the guard should have refused
// the write once w1.1's node was gone.
func goldenLateCommit() *chaos.Outcome {
	a := h{Proc: "w1.1", Prim: "mutex", Mode: "w", Tok: 10, Wait: 900, From: 1000, To: 1100, Why: chaos.WhyReleased}
	r := h{Proc: "w2.1", Prim: "mutex", Mode: "w", Tok: 20, Wait: 1000, From: 1200, To: 1500, Why: chaos.WhyReleased}
	e := h{Proc: "w3.1", Prim: "election", Mode: "w", Tok: 30, Wait: 1100, From: 1240, To: 1300, Why: chaos.WhyReleased}
	a1 := w{H: a, W: 1, V: 1, At: 1020, Res: chaos.ResOK}
	a2 := w{H: a, W: 2, V: 2, At: 1090, Reply: 3000, Res: chaos.ResUnknown}
	r1 := w{H: r, W: 1, V: 3, At: 1400, Res: chaos.ResOK}
	e1 := w{H: e, W: 1, V: 1, At: 1250, Res: chaos.ResOK}
	return newHistory().acquire(a).write(a1).write(a2).release(a).acquire(r).write(r1).release(r).
		acquire(e).write(e1).release(e).commit(a1).commit(e1).commit(a2).commit(r1).outcome()
}

// goldenUnmatchedAcquire: issue 33 — an acquire logged with no release
// before the same workload's next acquire; the old checker dropped the
// first hold, and with it its overlap with w2.1.
func goldenUnmatchedAcquire() *chaos.Outcome {
	a := h{Proc: "w1.1", Prim: "mutex", Mode: "w", Tok: 10, Wait: 900, From: 1000}
	a2 := h{Proc: "w1.1", Prim: "mutex", Mode: "w", Tok: 11, Wait: 1900, From: 2000, To: 2100, Why: chaos.WhyReleased}
	r := h{Proc: "w2.1", Prim: "mutex", Mode: "w", Tok: 20, Wait: 1000, From: 1500, To: 1600, Why: chaos.WhyReleased}
	return newHistory().acquire(a).hold(r).hold(a2).outcome()
}

// goldenFaultError: issue 33 — a fault that failed (the freeze's SIGSTOP
// found no process): the run did not do what its record says, which the
// old recheck did not report.
func goldenFaultError() *chaos.Outcome {
	a := h{Proc: "w1.1", Prim: "mutex", Mode: "w", Tok: 10, Wait: 900, From: 1000, To: 1100, Why: chaos.WhyReleased}
	b := newHistory().hold(a)
	b.o.Faults = []chaos.Fault{{Kind: chaos.FaultPause, Target: "w1.1", Start: 5000 * ms, End: 5001 * ms, Err: "os: process already finished"}}
	return b.outcome()
}

// goldenFollowerCut is issue 32's reproduction (the chaos configuration, a
// holder that can reach only a follower cut off from the leader, cut at
// P = 5s): the holder's deadline was P+1.6s at the cut, the follower's
// replies pushed it to P+2.7s (logged with a write sent at P+1.1s, which
// the follower could not commit); the leader expired the session and the
// rival held at P+2.0s; the holder's Lost came at P+2.75s. Both checkers
// report it: the old one as an overlap, the new one also as a grant before
// the holder's ownership deadline.
func goldenFollowerCut() *chaos.Outcome {
	a := h{Proc: "w1.1", Prim: "mutex", Mode: "w", Tok: 10, Wait: 4400, From: 4500, Dl: 6100, To: 7750, Why: chaos.WhyLost}
	r := h{Proc: "w2.1", Prim: "mutex", Mode: "w", Tok: 20, Wait: 4600, From: 7000, To: 7800, Why: chaos.WhyReleased}
	a1 := w{H: a, W: 1, V: 1, At: 4800, Dl: 6400, Res: chaos.ResOK}
	a2 := w{H: a, W: 2, V: 2, At: 6100, Dl: 7700, Reply: 7760, Res: chaos.ResUnknown}
	r1 := w{H: r, W: 1, V: 2, At: 7100, Res: chaos.ResOK}
	return newHistory().acquire(a).write(a1).write(a2).release(a).acquire(r).write(r1).release(r).
		commit(a1).commit(r1).outcome()
}
