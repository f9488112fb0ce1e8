package chaos_test

import (
	"strings"
	"testing"

	"github.com/zklock/zklock/chaos"
)

// pgWrite logs write w of proc to the PostgreSQL resource under tok at ms.
func pgWrite(proc string, tok, w, at int64, res string, stored int64) chaos.Event {
	return chaos.Event{Ev: chaos.EvPGWrite, Proc: proc, Prim: "mutex", Tok: tok, W: w, T: at * ms, T1: at*ms + ms, Res: res, Stored: stored}
}

// pgRun: A holds the mutex with token 10 over [10,100] and writes twice to
// PostgreSQL; B (token 20) holds over [150,300], writes once; A's third
// write, sent at 95ms, is frozen over [95.5,98] and refused by B's token
// (a synthetic history: the times need not be a real run's). The rows in
// value order are A, A, B.
func pgRun() *chaos.Outcome {
	evs := cat(hold("A", "mutex", "w", 10, 10, 100), hold("B", "mutex", "w", 20, 150, 300), []chaos.Event{
		pgWrite("A", 10, 1, 20, chaos.ResOK, 0), pgWrite("A", 10, 2, 50, chaos.ResOK, 0),
		pgWrite("B", 20, 1, 200, chaos.ResOK, 0), pgWrite("A", 10, 3, 95, chaos.ResRefused, 20),
	})
	o := outcome(evs, nil, nil)
	// Frozen after the refused write was sent, before its reply: between
	// two of its round trips.
	o.Faults = []chaos.Fault{{Kind: chaos.FaultPause, Target: "A", Start: 95*ms + ms/2, End: 98 * ms}}
	o.PG = &chaos.PGOutcome{
		Rows: []chaos.PGRow{{Resource: "mutex", V: 1, Tok: 10, Proc: "A", W: 1}, {Resource: "mutex", V: 2, Tok: 10, Proc: "A", W: 2},
			{Resource: "mutex", V: 3, Tok: 20, Proc: "B", W: 1}},
		Counters: map[string]int64{"mutex": 3}, Fence: map[string]int64{"mutex": 20},
	}
	return o
}

// A clean history passes, with its refusal counted as a frozen holder's.
func TestCheckerPostgresClean(t *testing.T) {
	rep := chaos.Check(pgRun())
	var pgViolations []string
	for _, v := range rep.Violations {
		if strings.HasPrefix(v, "postgres") {
			pgViolations = append(pgViolations, v)
		}
	}
	if len(pgViolations) > 0 || rep.PG == nil || rep.PG.Writes[chaos.ResRefused] != 1 || rep.PG.RefusedFrozen != 1 || rep.PG.Committed["mutex"] != 3 {
		t.Fatalf("violations %q, figures %+v:\n%s", pgViolations, rep.PG, rep)
	}
	if !strings.Contains(rep.String(), "postgres, written through the fence: 3 committed (map[mutex:3]), 1 refused as stale (1 of them by holders frozen") {
		t.Fatalf("report:\n%s", rep)
	}
}

// Each way the resource can be wrong is reported.
func TestCheckerPostgresViolations(t *testing.T) {
	for _, c := range []struct {
		name  string
		spoil func(o *chaos.Outcome)
		want  string
	}{
		{"a stale token committed", func(o *chaos.Outcome) {
			o.PG.Rows[1].V, o.PG.Rows[2].V = 3, 2 // B's write committed between A's two
		}, "postgres: mutex: stale write committed: A write 2 with token 10 after B's token 20 (value 3 after 2)"},
		{"two transactions at once", func(o *chaos.Outcome) {
			o.PG.Rows[2].V = 2 // B read the counter before A's second write committed
			o.PG.Counters["mutex"] = 3
		}, "value 2 written by B write 1 (token 20) where 3 belongs: two fenced transactions ran at once"},
		{"acknowledged, no row", func(o *chaos.Outcome) {
			o.PG.Rows = o.PG.Rows[:2]
			o.PG.Counters["mutex"], o.PG.Fence["mutex"] = 2, 10
		}, "postgres: mutex: write 1 by B acknowledged but not committed (no row)"},
		{"refused, with a row", func(o *chaos.Outcome) {
			o.PG.Rows = append(o.PG.Rows, chaos.PGRow{Resource: "mutex", V: 4, Tok: 20, Proc: "A", W: 3})
			o.PG.Counters["mutex"] = 4
		}, "write 3 by A reported refused but committed"},
		{"a row nobody logged", func(o *chaos.Outcome) {
			o.PG.Rows = append(o.PG.Rows, chaos.PGRow{Resource: "mutex", V: 4, Tok: 20, Proc: "B", W: 9})
			o.PG.Counters["mutex"] = 4
		}, "row of write 9 by B (value 4) but no such write logged"},
		{"the counter", func(o *chaos.Outcome) { o.PG.Counters["mutex"] = 5 }, "final counter 5 but 3 fenced writes committed"},
		{"the fence's token", func(o *chaos.Outcome) { o.PG.Fence["mutex"] = 30 }, "the fence keeps token 30, the highest committed is 20"},
	} {
		t.Run(c.name, func(t *testing.T) {
			o := pgRun()
			c.spoil(o)
			mustFind(t, o, c.want)
		})
	}
}
