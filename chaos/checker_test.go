package chaos_test

import (
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/chaos"
)

const ms = int64(time.Millisecond)

// hold logs one believed hold of prim by proc over [from, to] ms.
func hold(proc, prim, mode string, tok, from, to int64) []chaos.Event {
	return []chaos.Event{
		{Ev: chaos.EvWait, Proc: proc, Prim: prim, T: from*ms - ms},
		{Ev: chaos.EvAcquire, Proc: proc, Prim: prim, Mode: mode, Tok: tok, T: from * ms},
		{Ev: chaos.EvRelease, Proc: proc, Prim: prim, Mode: mode, Tok: tok, T: to * ms, Res: chaos.WhyReleased},
	}
}

// write logs write w of proc under tok at ms, setting the counter to v.
func write(proc, prim string, tok, w, v, at int64, res string) chaos.Event {
	return chaos.Event{Ev: chaos.EvWrite, Proc: proc, Prim: prim, Tok: tok, W: w, V: v, T: at * ms, T1: at*ms + ms, Res: res}
}

// outcome is a run of 1s with the given events, committed receipts (in
// commit order) and final counters.
func outcome(evs []chaos.Event, receipts map[string][]chaos.Receipt, counters map[string]int64) *chaos.Outcome {
	for _, rs := range receipts {
		for i := range rs {
			rs[i].Seq = int64(i)
		}
	}
	return &chaos.Outcome{Start: 0, Stop: 1000 * ms, Events: evs, Receipts: receipts, Counters: counters,
		Limit: 2, SessionTimeout: 2 * time.Second}
}

func cat(parts ...[]chaos.Event) []chaos.Event {
	var out []chaos.Event
	for _, p := range parts {
		out = append(out, p...)
	}
	return out
}

// twoHolders: A holds mutex token 10 over [10,100] and writes 1, B holds
// token 20 over [from,300] and writes 2.
func twoHolders(from int64, bRes string) ([]chaos.Event, map[string][]chaos.Receipt, map[string]int64) {
	evs := cat(hold("A", "mutex", "w", 10, 10, 100), hold("B", "mutex", "w", 20, from, 300),
		[]chaos.Event{write("A", "mutex", 10, 1, 1, 50, chaos.ResOK), write("B", "mutex", 20, 1, 2, 200, bRes)})
	rs := map[string][]chaos.Receipt{"mutex": {{Proc: "A", W: 1, Tok: 10, V: 1}, {Proc: "B", W: 1, Tok: 20, V: 2}}}
	return evs, rs, map[string]int64{"mutex": 2}
}

func TestCheckerClean(t *testing.T) {
	rep := chaos.Check(outcome(twoHolders(150, chaos.ResOK)))
	if !rep.OK() {
		t.Fatalf("violations in a clean run:\n%s", rep)
	}
	if rep.Acquisitions["mutex"] != 2 || rep.Writes[chaos.ResOK] != 2 {
		t.Fatalf("counted %d acquisitions, %d writes; want 2, 2", rep.Acquisitions["mutex"], rep.Writes[chaos.ResOK])
	}
}

// mustFind runs the checker and requires a violation containing want.
func mustFind(t *testing.T, o *chaos.Outcome, want string) *chaos.Report {
	t.Helper()
	rep := chaos.Check(o)
	for _, v := range rep.Violations {
		if strings.Contains(v, want) {
			return rep
		}
	}
	t.Fatalf("no violation containing %q:\n%s", want, rep)
	return nil
}

func TestCheckerOverlap(t *testing.T) {
	mustFind(t, outcome(twoHolders(80, chaos.ResOK)), "believed they held together")
}

func TestCheckerLostIncrement(t *testing.T) {
	evs, rs, counters := twoHolders(150, chaos.ResOK)
	rs["mutex"][1].V = 1 // B read the counter before A's write: both wrote 1
	counters["mutex"] = 1
	mustFind(t, outcome(evs, rs, counters), "value 1 written by B token 20 after the counter reached 1 (by A token 10): 1 increment(s) lost")
	evs, rs, counters = twoHolders(150, chaos.ResOK)
	counters["mutex"] = 3
	mustFind(t, outcome(evs, rs, counters), "final counter 3 but 2 increments committed")
}

func TestCheckerStaleToken(t *testing.T) {
	evs, rs, counters := twoHolders(150, chaos.ResOK)
	rs["mutex"][0], rs["mutex"][1] = rs["mutex"][1], rs["mutex"][0]
	rs["mutex"][0].V, rs["mutex"][1].V = 1, 2
	mustFind(t, outcome(evs, rs, counters), "stale token 10 accepted")
}

func TestCheckerAcknowledgedNotCommitted(t *testing.T) {
	evs, rs, counters := twoHolders(150, chaos.ResOK)
	rs["mutex"] = rs["mutex"][:1]
	counters["mutex"] = 1
	mustFind(t, outcome(evs, rs, counters), "acknowledged but not committed")
	evs, rs, counters = twoHolders(150, chaos.ResRejected)
	mustFind(t, outcome(evs, rs, counters), "reported rejected but committed")
}

// An outcome saved by a run reads back to the same verdict, receipts'
// commit order included.
func TestOutcomeRoundTrip(t *testing.T) {
	evs, rs, counters := twoHolders(150, chaos.ResOK) // B acquires after A released: clean
	o := outcome(evs, rs, counters)
	p := t.TempDir() + "/" + chaos.OutcomeFile
	if err := chaos.SaveOutcome(p, o); err != nil {
		t.Fatal(err)
	}
	back, err := chaos.LoadOutcome(p)
	if err != nil {
		t.Fatal(err)
	}
	if got, want := chaos.Check(back).String(), chaos.Check(o).String(); got != want || !chaos.Check(back).OK() {
		t.Fatalf("report after a round trip:\n%s\nwant:\n%s", got, want)
	}
	if !reflect.DeepEqual(back.Receipts, o.Receipts) || back.Receipts["mutex"][1].Seq != 1 {
		t.Fatalf("receipts after a round trip %+v, want %+v (with their commit order)", back.Receipts, o.Receipts)
	}
	if _, err := chaos.LoadOutcome(t.TempDir()); err == nil {
		t.Fatal("a directory read as an outcome")
	}
}

// A write acknowledged with receipt number 0 whose receipt never came, while
// another write's receipt carries number 0, is the servers' history going
// back: reported as ServerLost with both writes named, and the lost write is
// still a violation (the checker hides nothing).
func TestCheckerReceiptNumberGivenTwice(t *testing.T) {
	evs, rs, counters := twoHolders(150, chaos.ResOK)
	lost := write("A", "mutex", 10, 2, 2, 60, chaos.ResOK)
	lost.Seq = 1 // B's receipt got number 1 as well (outcome numbers receipts 0, 1)
	evs = append(evs, lost)
	o := outcome(evs, rs, counters)
	o.Reused = []chaos.Reuse{{Prim: "rwmutex", Seq: 7, First: "w1.1 write 3", Second: "w2.1 write 9", At: 500 * ms}}
	rep := chaos.Check(o)
	want := []chaos.Reuse{o.Reused[0], {Prim: "mutex", Seq: 1, First: "A write 2", Second: "B write 1", At: 61 * ms}}
	if !reflect.DeepEqual(rep.ServerLost, want) {
		t.Fatalf("ServerLost %+v, want %+v", rep.ServerLost, want)
	}
	if rep.OK() || !strings.Contains(rep.String(), "receipt 1 given to A write 2 and to B write 1") {
		t.Fatalf("want the lost write as a violation and the evidence in the report:\n%s", rep)
	}
	// A write whose receipt came is not evidence, whatever its number.
	evs2, rs2, counters2 := twoHolders(150, chaos.ResOK)
	evs2[len(evs2)-1].Seq = 1
	if rep := chaos.Check(outcome(evs2, rs2, counters2)); len(rep.ServerLost) != 0 || !rep.OK() {
		t.Fatalf("a committed write's number reported as given twice:\n%s", rep)
	}
}
