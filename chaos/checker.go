package chaos

import (
	"cmp"
	"fmt"
	"maps"
	"slices"
	"time"
)

// Outcome is everything a chaos run leaves for the checker.
type Outcome struct {
	Start, Stop    int64 // when faults began to be scheduled, when workers were told to stop
	Events         []Event
	Faults         []Fault
	Exits          []Exit
	Receipts       map[string][]Receipt // by primitive
	Counters       map[string]int64     // final value, by primitive
	Leftover       []string             // ephemeral nodes left after every worker exited
	Crashes        []string             // panics and data races in the workers' output
	Limit          int                  // the semaphore's
	SessionTimeout time.Duration        // negotiated
	Samples        []Sample             // workers' and servers' resources over time
	Reused         []Reuse              // receipt sequence numbers the harvest found twice
	// Nodes is the coordinator's record of the peer holds' nodes (see
	// nodeWatcher), by full path: the ground truth of the peer excuses.
	Nodes map[string]NodeLife `json:"nodes,omitempty"`
	// PG is the PostgreSQL resource at the end, nil if the run had none.
	PG *PGOutcome `json:"pg,omitempty"`

	Conns map[string][]Event `json:"-"` // peer workers' connection events by process, in log order
}

// LivenessSlack is what the liveness check allows beyond the session timeout
// for a primitive to have no holder while contenders wait and no fault is
// active: the server expires a session within its timeout plus a tick after
// the client's last message; then the waiter's watch must fire and it must
// list the children and verify its node (a few round trips), a client cut
// off during the fault may still be in its reconnect back-off (at most 1s),
// and a two-core machine running three JVMs and the workers under the race
// detector adds scheduling delays of up to a second or two.
const LivenessSlack = 5 * time.Second

// Interval is a stretch in which one holder believed it held a primitive.
type Interval struct {
	Proc, Prim, Mode string
	Lib              string // LibCurator or LibKazoo for a peer worker's hold; empty for zklock's
	G                int    // the workload within Proc (see Event.G)
	N                int    // the leases of a semaphore hold (at least one)
	Tok              int64
	Wait             int64 // when the acquisition began
	Start, End       int64
	Why              string // WhyReleased, WhyLost, "exited" when the log stops, "unmatched" when an acquire follows
	Dl               int64  // the latest ownership deadline the zklock holder logged (Event.Dl), 0 if none
	Node             string // a peer hold's node (Event.Node)
}

// Check runs every check on r.
func Check(r *Outcome) *Report {
	rep := newReport(r)
	indexConns(r)
	ivs := intervals(r, rep)
	for _, iv := range ivs {
		rep.Acquisitions[iv.Prim]++
	}
	committed := checkWrites(r, rep)
	ord := newCommitOrder(r, committed)
	checkHistory(r, committed, rep)
	checkTokens(r, rep)
	checkOverlaps(r, ivs, ord, rep)
	checkDeadlines(r, ivs, rep)
	peerLate := checkLateCommits(r, ivs, committed, ord, rep)
	checkCounters(r, peerWrites(r, rep, peerLate), rep)
	checkPostgres(r, ivs, rep)
	checkLiveness(r, ivs, rep)
	recovery(r, ivs, rep)
	lossLeads(r, ivs, rep)
	deadlineLeads(ivs, rep)
	watcherLeads(r, ivs, rep)
	frozenFigures(r, rep)
	for _, f := range r.Faults {
		if f.Err != "" {
			rep.violate("fault %s on %s failed: %s (the run did not do what its record says)", f.Kind, f.Target, f.Err)
		}
	}
	for _, e := range r.Exits {
		if e.Err != "" || (!e.Killed && !e.Stopped) {
			rep.violate("worker %s ended unexpectedly (%s): see its .out file", e.Proc, e.Err)
		}
	}
	for _, c := range r.Crashes {
		rep.violate("worker output: %s", c)
	}
	for _, n := range r.Leftover {
		rep.violate("node left on the server after every client exited: %s", n)
	}
	resources(r, rep)
	return rep
}

// exitTimes maps each incarnation to when it ended.
func exitTimes(r *Outcome) map[string]int64 {
	m := map[string]int64{}
	for _, e := range r.Exits {
		if t, ok := m[e.Proc]; !ok || e.T < t {
			m[e.Proc] = e.T
		}
	}
	return m
}

// holdKey names one workload: it holds at most once at a time.
type holdKey struct {
	proc, prim string
	g          int
}

// intervals pairs acquire and release events, and gives each hold the
// latest deadline its holder logged. An acquire that follows another of
// the same workload with no release between is reported (the first hold
// ends there); a hold still open when its log stops ends when its process
// ended, and is reported unless the process was killed or is a peer's (a
// Curator or Kazoo worker told to stop may leave a write hanging).
func intervals(r *Outcome, rep *Report) []Interval {
	open := map[holdKey]*Interval{}
	waited := map[holdKey]int64{}
	var out []Interval
	for _, e := range r.Events {
		k := holdKey{e.Proc, e.Prim, e.G}
		switch e.Ev {
		case EvWait:
			waited[k] = e.T
		case EvAcquire:
			if iv := open[k]; iv != nil {
				rep.violate("%s: %s acquired %s again at %v without a release of its hold from %v (an acquire with no release)",
					e.Prim, e.Proc, e.Prim, rep.at(e.T), rep.at(iv.Start))
				iv.End, iv.Why = e.T, "unmatched"
				out = append(out, *iv)
			}
			open[k] = &Interval{Proc: e.Proc, Prim: e.Prim, Lib: e.Lib, G: e.G, N: max(e.N, 1), Mode: e.Mode, Tok: e.Tok,
				Wait: waited[k], Start: e.T, Dl: e.Dl, Node: e.Node}
		case EvWrite:
			if iv := open[k]; iv != nil && iv.Tok == e.Tok {
				iv.Dl = max(iv.Dl, e.Dl)
			}
		case EvRelease:
			if iv := open[k]; iv != nil {
				iv.End, iv.Why = e.T, e.Res
				out = append(out, *iv)
				delete(open, k)
			}
		}
	}
	out = append(out, closeOpen(r, open, rep)...)
	slices.SortStableFunc(out, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

// closeOpen ends the holds still open when their logs stop when their
// process ended, and reports a zklock one whose process was not killed.
func closeOpen(r *Outcome, open map[holdKey]*Interval, rep *Report) []Interval {
	exits, killed := exitTimes(r), map[string]bool{}
	for _, e := range r.Exits {
		killed[e.Proc] = killed[e.Proc] || e.Killed
	}
	var left []Interval
	for _, iv := range open {
		iv.End, iv.Why = r.Stop, "exited"
		if t, ok := exits[iv.Proc]; ok {
			iv.End = t
		}
		left = append(left, *iv)
	}
	slices.SortFunc(left, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	for _, iv := range left {
		if !killed[iv.Proc] && iv.Lib == "" {
			rep.violate("%s: %s's hold from %v has no release though its process was not killed", iv.Prim, iv.Proc, rep.at(iv.Start))
		}
	}
	return left
}

type writeKey struct {
	proc string
	w    int64
}

// checkWrites matches logged writes with receipts, and returns the writes
// that committed. Each primitive's receipts are left sorted by Seq, their
// commit order within it, which checkTokens and checkCounters rely on.
func checkWrites(r *Outcome, rep *Report) map[writeKey]Receipt {
	committed := map[writeKey]Receipt{}
	for _, rs := range r.Receipts {
		slices.SortFunc(rs, func(a, b Receipt) int { return cmp.Compare(a.Seq, b.Seq) })
		for _, rc := range rs {
			committed[writeKey{rc.Proc, rc.W}] = rc
		}
	}
	logged := map[writeKey]bool{}
	for _, e := range r.Events {
		if e.Ev == EvWrite {
			logged[writeKey{e.Proc, e.W}] = true
			checkWrite(e, committed, rep)
		}
	}
	killed := map[string]bool{}
	for _, e := range r.Exits {
		killed[e.Proc] = killed[e.Proc] || e.Killed
	}
	keys := slices.SortedFunc(maps.Keys(committed), func(a, b writeKey) int { return cmp.Or(cmp.Compare(a.proc, b.proc), cmp.Compare(a.w, b.w)) })
	for _, k := range keys {
		if !logged[k] && !killed[k.proc] {
			rep.violate("receipt of write %d by %s (value %d) but no such write logged", k.w, k.proc, committed[k].V)
		}
	}
	return committed
}

func checkWrite(e Event, committed map[writeKey]Receipt, rep *Report) {
	_, ok := committed[writeKey{e.Proc, e.W}]
	rep.Writes[e.Res]++
	switch {
	case e.Res == ResUnknown && ok:
		rep.Writes["unknown, committed"]++
	case e.Res == ResOK && !ok:
		rep.violate("%s: write %d by %s acknowledged but not committed (no receipt)", e.Prim, e.W, e.Proc)
	case (e.Res == ResRejected || e.Res == ResSkipped) && ok:
		rep.violate("%s: write %d by %s reported %s but committed", e.Prim, e.W, e.Proc, e.Res)
	}
	if ok && e.Lost {
		rep.violate("%s: write %d by %s (token %d) committed after its holder saw the loss signal", e.Prim, e.W, e.Proc, e.Tok)
	}
}

// checkTokens: the writes of an exclusive primitive commit in token order;
// a smaller token after a larger one is a stale holder's write accepted.
func checkTokens(r *Outcome, rep *Report) {
	for prim, rs := range r.Receipts {
		if counting(prim) {
			continue // concurrent holders by design: see the overlap check
		}
		var max Receipt
		for _, rc := range rs {
			if rc.Tok == 0 {
				continue // a peer worker's: no token
			}
			if rc.Tok < max.Tok {
				rep.violate("%s: write by %s with stale token %d accepted after %s's token %d", prim, rc.Proc, rc.Tok, max.Proc, max.Tok)
			}
			if rc.Tok > max.Tok {
				max = rc
			}
		}
	}
}

// sameHolder reports whether a and b are holds of one workload: one
// goroutine of one process, which never holds twice at once.
func sameHolder(a, b Interval) bool { return a.Proc == b.Proc && a.G == b.G }

func describe(iv Interval) string {
	return fmt.Sprintf("%s %s token %d", iv.Proc, iv.Mode, iv.Tok)
}
