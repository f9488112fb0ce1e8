package chaos_test

import (
	"testing"
	"time"

	"github.com/zklock/zklock/chaos"
)

// pausedRun: A holds mutex token 10 over [10,3410] and is frozen over
// [20,3400]; B acquires token 20 at 2250 (2.23s into the freeze, past the
// 2s session's expiry) and writes; A writes at 3405, after it resumed and
// before it saw the loss at 3410.
func pausedRun(aCommitted bool) *chaos.Outcome {
	evs := cat(hold("A", "mutex", "w", 10, 10, 3410), hold("B", "mutex", "w", 20, 2250, 2290),
		[]chaos.Event{write("B", "mutex", 20, 1, 1, 2260, chaos.ResOK)})
	rs := map[string][]chaos.Receipt{"mutex": {{Proc: "B", W: 1, Tok: 20, V: 1}}}
	counters := map[string]int64{"mutex": 1}
	if aCommitted {
		evs = append(evs, write("A", "mutex", 10, 1, 2, 3405, chaos.ResOK))
		rs["mutex"] = append(rs["mutex"], chaos.Receipt{Proc: "A", W: 1, Tok: 10, V: 2})
		counters["mutex"] = 2
	} else {
		evs = append(evs, write("A", "mutex", 10, 1, 2, 3405, chaos.ResRejected))
	}
	o := outcome(evs, rs, counters)
	o.Stop = 5000 * ms
	o.Faults = []chaos.Fault{{Kind: chaos.FaultPause, Target: "A", Start: 20 * ms, End: 3400 * ms}}
	return o
}

func TestCheckerPausedOverlapFenced(t *testing.T) {
	rep := chaos.Check(pausedRun(false))
	if !rep.OK() {
		t.Fatalf("a paused holder whose writes were refused is not a violation:\n%s", rep)
	}
	if n, fenced := rep.Fenced(); n != 1 || fenced != 1 || rep.PausedOverlaps[0].Writes != 1 {
		t.Fatalf("paused overlaps %d, fenced %d; want 1, 1 with 1 write:\n%s", n, fenced, rep)
	}
}

func TestCheckerPausedOverlapNotFenced(t *testing.T) {
	rep := mustFind(t, pausedRun(true), "fencing failed")
	if n, fenced := rep.Fenced(); n != 1 || fenced != 0 {
		t.Fatalf("paused overlaps %d, fenced %d; want 1, 0", n, fenced)
	}
}

func TestCheckerSemaphoreLimit(t *testing.T) {
	evs := cat(hold("A", "semaphore", "l", 1, 10, 100), hold("B", "semaphore", "l", 2, 20, 100))
	if rep := chaos.Check(outcome(evs, nil, nil)); !rep.OK() {
		t.Fatalf("two leases under a limit of 2:\n%s", rep)
	}
	evs = append(evs, hold("C", "semaphore", "l", 3, 30, 100)...)
	mustFind(t, outcome(evs, nil, nil), "3 leases believed held at once by 3 holders (limit 2)")
}

// The queue layout's workload runs at one more than the semaphore's limit
// and counts leases, not holders: two holds of two leases exceed its 3.
func TestCheckerSemaphoreQueueLeases(t *testing.T) {
	leases := func(evs []chaos.Event, n int) []chaos.Event {
		for i := range evs {
			if evs[i].Ev == chaos.EvAcquire {
				evs[i].N = n
			}
		}
		return evs
	}
	evs := cat(leases(hold("A", "semqueue", "l", 1, 10, 100), 2), hold("B", "semqueue", "l", 2, 20, 100))
	if rep := chaos.Check(outcome(evs, nil, nil)); !rep.OK() {
		t.Fatalf("three leases under a limit of 3:\n%s", rep)
	}
	evs = cat(leases(hold("A", "semqueue", "l", 1, 10, 100), 2), leases(hold("B", "semqueue", "l", 2, 20, 100), 2))
	mustFind(t, outcome(evs, nil, nil), "semqueue: 4 leases believed held at once by 2 holders (limit 3)")
}

func TestCheckerReaderBesideWriter(t *testing.T) {
	evs := cat(hold("A", "rwmutex", "r", 1, 10, 100), hold("B", "rwmutex", "r", 2, 20, 100))
	if rep := chaos.Check(outcome(evs, nil, nil)); !rep.OK() {
		t.Fatalf("two readers:\n%s", rep)
	}
	evs = append(evs, hold("C", "rwmutex", "w", 3, 50, 150)...)
	mustFind(t, outcome(evs, nil, nil), "believed they held together")
}

func TestCheckerLeftover(t *testing.T) {
	o := outcome(nil, nil, nil)
	o.Leftover = []string{"/chaos/locks/mutex/_c_x-lock-0000000001"}
	mustFind(t, o, "node left on the server")
}

func TestCheckerLiveness(t *testing.T) {
	// C waits from 99ms to the end of a 20s run and nobody holds: longer
	// than the bound of 2s+LivenessSlack.
	evs := []chaos.Event{{Ev: chaos.EvWait, Proc: "C", Prim: "mutex", T: 99 * ms}}
	o := outcome(evs, nil, nil)
	o.Stop = 20_000 * ms
	mustFind(t, o, "mutex: no holder for")
	o.Faults = []chaos.Fault{{Kind: chaos.FaultLeaderKill, Start: 2000 * ms, End: 15_000 * ms}}
	if rep := chaos.Check(o); !rep.OK() {
		t.Fatalf("idle stretches broken by a fault are each within the bound:\n%s", rep)
	}
}

func TestCheckerWorkerEndedOnItsOwn(t *testing.T) {
	o := outcome(nil, nil, nil)
	o.Exits = []chaos.Exit{{Proc: "A", T: 500 * ms, Err: "exit status 2"}}
	mustFind(t, o, "worker A ended unexpectedly")
	o.Exits = []chaos.Exit{{Proc: "A", T: 500 * ms, Killed: true}, {Proc: "B", T: 900 * ms, Stopped: true}}
	if rep := chaos.Check(o); !rep.OK() {
		t.Fatalf("a killed worker and a stopped one:\n%s", rep)
	}
	o.Crashes = []string{"w1.1.out: WARNING: DATA RACE"}
	mustFind(t, o, "DATA RACE")
}

func TestCheckerRecovery(t *testing.T) {
	var evs []chaos.Event
	for _, prim := range chaos.Primitives {
		evs = append(evs, hold("A", prim, "w", 1, 300, 310)...) // 100ms after the first fault
		evs = append(evs, hold("A", prim, "w", 2, 700, 710)...) // after the second began
	}
	o := outcome(evs, nil, nil)
	o.Faults = []chaos.Fault{
		{Kind: chaos.FaultReset, Start: 100 * ms, End: 200 * ms},
		{Kind: chaos.FaultReset, Start: 400 * ms, End: 500 * ms},
		{Kind: chaos.FaultReset, Start: 600 * ms, End: 650 * ms},
	}
	rep := chaos.Check(o)
	got := rep.Recovery[chaos.FaultReset]
	if len(got) != 2 || got[0] != 100*time.Millisecond || got[1] != 50*time.Millisecond ||
		rep.Interrupted[chaos.FaultReset] != 1 || rep.Faults[chaos.FaultReset] != 3 {
		t.Fatalf("recovery %v, interrupted %d, faults %d; want [100ms 50ms], 1, 3",
			got, rep.Interrupted[chaos.FaultReset], rep.Faults[chaos.FaultReset])
	}
}

// A waiter frozen mid-acquisition whose session expired meanwhile may
// return, just after it is resumed, the grant it had checked before the
// freeze: its token is older than the holder that got in during the freeze.
func TestCheckerStaleOnArrival(t *testing.T) {
	evs := cat(hold("B", "election", "w", 20, 2250, 3400),
		[]chaos.Event{{Ev: chaos.EvWait, Proc: "A", Prim: "election", T: 5 * ms},
			{Ev: chaos.EvAcquire, Proc: "A", Prim: "election", Mode: "w", Tok: 10, T: 3001 * ms},
			{Ev: chaos.EvRelease, Proc: "A", Prim: "election", Mode: "w", Tok: 10, T: 3002 * ms, Res: chaos.WhyLost}})
	o := outcome(evs, nil, nil)
	o.Stop = 5000 * ms
	o.Faults = []chaos.Fault{{Kind: chaos.FaultPause, Target: "A", Start: 20 * ms, End: 3000 * ms}}
	rep := chaos.Check(o)
	if n, fenced := rep.Fenced(); !rep.OK() || n != 1 || fenced != 1 {
		t.Fatalf("a stale grant of a frozen waiter is a paused overlap:\n%s", rep)
	}
	o.Events[4].Tok = 30 // a newer token: a real second grant
	mustFind(t, o, "believed they held together")
}

// The semaphore form of a stale grant (seed 20261124): A's lease, older
// than B's and C's, is handed back just after A is resumed from a freeze
// that outlived its session; A sees the loss a few ms later. D, acquiring
// when C has left but A still believes, is not counted against A.
func staleLeaseRun(aTok int64, aRes string, frozen bool) *chaos.Outcome {
	evs := cat(hold("B", "semaphore", "l", 20, 2500, 4000), hold("C", "semaphore", "l", 21, 2600, 3000),
		hold("D", "semaphore", "l", 22, 3030, 4000),
		[]chaos.Event{{Ev: chaos.EvWait, Proc: "A", Prim: "semaphore", T: 5 * ms},
			{Ev: chaos.EvAcquire, Proc: "A", Prim: "semaphore", Mode: "l", Tok: aTok, T: 2990 * ms},
			write("A", "semaphore", aTok, 1, 1, 3020, aRes),
			{Ev: chaos.EvRelease, Proc: "A", Prim: "semaphore", Mode: "l", Tok: aTok, T: 3060 * ms, Res: chaos.WhyLost}})
	rs := map[string][]chaos.Receipt{"semaphore": nil}
	counters := map[string]int64{"semaphore": 0}
	if aRes == chaos.ResOK {
		rs["semaphore"] = []chaos.Receipt{{Proc: "A", W: 1, Tok: aTok, V: 1}}
		counters["semaphore"] = 1
	}
	o := outcome(evs, rs, counters)
	o.Stop = 5000 * ms
	if frozen {
		o.Faults = []chaos.Fault{{Kind: chaos.FaultPause, Target: "A", Start: 20 * ms, End: 2980 * ms}}
	}
	return o
}

func TestCheckerSemaphoreStaleOnArrival(t *testing.T) {
	rep := chaos.Check(staleLeaseRun(10, chaos.ResRejected, true))
	if n, fenced := rep.Fenced(); !rep.OK() || n != 1 || fenced != 1 || rep.PausedOverlaps[0].Writes != 1 {
		t.Fatalf("a stale lease of a frozen waiter is a paused overlap with 1 refused write:\n%s", rep)
	}
	if po := rep.PausedOverlaps[0]; po.Paused.Proc != "A" || po.Rivals != 2 {
		t.Fatalf("want A's stale lease overlapped by B and D, got %+v", po)
	}
	mustFind(t, staleLeaseRun(10, chaos.ResOK, true), "fencing failed")
	mustFind(t, staleLeaseRun(30, chaos.ResRejected, true), "3 leases believed held at once by 3 holders (limit 2)")
	mustFind(t, staleLeaseRun(10, chaos.ResRejected, false), "3 leases believed held at once by 3 holders (limit 2)")
}

// The stale lease of seed 20261125: when A's lease comes back after the
// freeze, only B (granted during it) holds, so A is within the limit; D's
// acquisition a moment later finds three believers. A is the paused one,
// not D, and only if A's grant is provably older than the freeze: frozen
// while acquiring, older than a lease granted since it began to wait, and
// ended by its loss signal.
func staleLaterRun(aTok int64, aWhy string, frozen bool) *chaos.Outcome {
	evs := cat(hold("B", "semaphore", "l", 20, 2500, 4000), hold("D", "semaphore", "l", 22, 3000, 4000),
		[]chaos.Event{{Ev: chaos.EvWait, Proc: "A", Prim: "semaphore", T: 5 * ms},
			{Ev: chaos.EvAcquire, Proc: "A", Prim: "semaphore", Mode: "l", Tok: aTok, T: 2990 * ms},
			write("A", "semaphore", aTok, 1, 1, 3020, chaos.ResRejected),
			{Ev: chaos.EvRelease, Proc: "A", Prim: "semaphore", Mode: "l", Tok: aTok, T: 3060 * ms, Res: aWhy}})
	o := outcome(evs, map[string][]chaos.Receipt{"semaphore": nil}, map[string]int64{"semaphore": 0})
	o.Stop = 5000 * ms
	if frozen {
		o.Faults = []chaos.Fault{{Kind: chaos.FaultPause, Target: "A", Start: 20 * ms, End: 2980 * ms}}
	}
	return o
}

func TestCheckerSemaphoreStaleSeenLater(t *testing.T) {
	rep := chaos.Check(staleLaterRun(10, chaos.WhyLost, true))
	if n, fenced := rep.Fenced(); !rep.OK() || n != 1 || fenced != 1 || rep.PausedOverlaps[0].Writes != 1 {
		t.Fatalf("a stale lease seen by a later holder is a paused overlap with 1 refused write:\n%s", rep)
	}
	if po := rep.PausedOverlaps[0]; po.Paused.Proc != "A" || po.Rival.Proc != "D" {
		t.Fatalf("want A's stale lease overlapped by D, got %+v", po)
	}
	const three = "3 leases believed held at once by 3 holders (limit 2) when D"
	mustFind(t, staleLaterRun(30, chaos.WhyLost, true), three)     // newer than B's: not stale
	mustFind(t, staleLaterRun(10, chaos.WhyReleased, true), three) // never lost: its session held
	mustFind(t, staleLaterRun(10, chaos.WhyLost, false), three)    // not frozen
}

// A cut-off holder A sees its loss at 300ms; B acquires at 450ms: a lead
// of 150ms. A frozen holder's late loss is not a lead.
func TestCheckerLossLead(t *testing.T) {
	evs := cat(hold("A", "mutex", "w", 10, 10, 300), hold("B", "mutex", "w", 20, 450, 500),
		hold("C", "election", "w", 30, 10, 300), hold("D", "election", "w", 40, 350, 500))
	evs[2].Res = chaos.WhyLost
	evs[8].Res = chaos.WhyLost
	o := outcome(evs, nil, nil)
	o.Faults = []chaos.Fault{{Kind: chaos.FaultPause, Target: "C", Start: 20 * ms, End: 290 * ms}}
	rep := chaos.Check(o)
	if !rep.OK() || len(rep.LossLeads) != 1 || rep.LossLeads[0] != 150*time.Millisecond {
		t.Fatalf("want one lead of 150ms (A's), got %v:\n%s", rep.LossLeads, rep)
	}
}
