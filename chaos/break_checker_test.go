package chaos_test

// Adversarial histories for the chaos checker (issue 33's fix), by the
// review of branch swap: each encodes a real zklock failure; a test named
// TestBreak… fails when the checker passes it.

import (
	"testing"

	"github.com/zklock/zklock/chaos"
)

// TestBreakSemaphoreLateCommit: the fencing check that "does not care who
// holds" (checkLateCommits) skips counting primitives. Semaphore of limit
// 2: w1.1's lease is lost at 1.5s, with a write sent at 1.4s whose reply
// is lost; w3.1 is granted at 1.6s beside w2.1, which shows w1.1's lease
// node gone (three leases would exceed the limit); w1.1's write commits
// after w3.1's (commit order). Its guard (the lease node) should have
// refused it, as for a mutex (goldenLateCommit). w2.1 had logged an
// ownership deadline of 2.6s at its acquire: its node stood at 1.6s.
func TestBreakSemaphoreLateCommit(t *testing.T) {
	a := h{Proc: "w1.1", Prim: "semaphore", Mode: "w", Tok: 10, Wait: 900, From: 1000, To: 1500, Why: chaos.WhyLost}
	b := h{Proc: "w2.1", Prim: "semaphore", Mode: "w", Tok: 20, Wait: 900, From: 1000, Dl: 2600, To: 3000, Why: chaos.WhyReleased}
	c := h{Proc: "w3.1", Prim: "semaphore", Mode: "w", Tok: 30, Wait: 1100, From: 1600, To: 2000, Why: chaos.WhyReleased}
	e := h{Proc: "w4.1", Prim: "election", Mode: "w", Tok: 40, Wait: 1500, From: 1640, To: 1700, Why: chaos.WhyReleased}
	a1 := w{H: a, W: 1, V: 1, At: 1100, Res: chaos.ResOK}
	b1 := w{H: b, W: 1, V: 2, At: 1200, Res: chaos.ResOK}
	a2 := w{H: a, W: 2, V: 3, At: 1400, Reply: 3000, Res: chaos.ResUnknown}
	e1 := w{H: e, W: 1, V: 1, At: 1650, Res: chaos.ResOK} // sent after w3.1 acquired, committed before a2
	o := newHistory().acquire(a).acquire(b).write(a1).write(b1).write(a2).release(a).hold(c).
		acquire(e).write(e1).release(e).release(b).commit(a1).commit(b1).commit(e1).commit(a2).outcome()
	requireViolation(t, o)
}

// TestBreakSemaphoreGrantBeforeDeadline: the claim as the check
// (checkDeadlines) covers exclusive primitives only. w1.1 holds a lease
// with an ownership deadline logged at 3s and is killed at 1.5s; its node
// stays until its session expires, after 3s. w3.1 is granted at 1.6s
// beside w2.1: with w1.1's node still there that is three leases of a
// limit of 2. For a mutex the same history is reported ("acquired ...
// before the ownership deadline").
func TestBreakSemaphoreGrantBeforeDeadline(t *testing.T) {
	kill := func(prim string) *chaos.Outcome {
		a := h{Proc: "w1.1", Prim: prim, Mode: "w", Tok: 10, Wait: 900, From: 1000, Dl: 3000}
		b := h{Proc: "w2.1", Prim: prim, Mode: "w", Tok: 20, Wait: 900, From: 1000, To: 3000, Why: chaos.WhyReleased}
		c := h{Proc: "w3.1", Prim: prim, Mode: "w", Tok: 30, Wait: 1100, From: 1600, To: 2000, Why: chaos.WhyReleased}
		hist := newHistory().fault(chaos.FaultClientKill, a.Proc, 1500, 1500).acquire(a)
		if prim == "semaphore" {
			hist.acquire(b)
		}
		hist.hold(c)
		if prim == "semaphore" {
			hist.release(b)
		}
		hist.o.Exits = append(hist.o.Exits, chaos.Exit{Proc: a.Proc, T: 1500 * ms, Killed: true})
		return hist.outcome()
	}
	// The control: on a mutex (without w2.1) the history is reported.
	requireViolation(t, kill("mutex"))
	requireViolation(t, kill("semaphore"))
}

func requireViolation(t *testing.T, o *chaos.Outcome) {
	t.Helper()
	rep := chaos.Check(o)
	if rep.OK() {
		t.Fatalf("the checker passed a history that encodes a failure; its report:\n%s", rep)
	}
	t.Logf("reported: %q", rep.Violations)
}
