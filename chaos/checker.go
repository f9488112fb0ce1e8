package chaos

import (
	"cmp"
	"fmt"
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
	UpstreamRaces  []string             // data races entirely inside go-zookeeper
	Limit          int                  // the semaphore's
	SessionTimeout time.Duration        // negotiated
	Samples        []Sample             // workers' and servers' resources over time
	Reused         []Reuse              // receipt sequence numbers the harvest found twice

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
	Why              string // WhyReleased, WhyLost, or "exited" when the log stops
}

// Check runs every check on r.
func Check(r *Outcome) *Report {
	rep := newReport(r)
	indexConns(r)
	ivs := intervals(r)
	for _, iv := range ivs {
		rep.Acquisitions[iv.Prim]++
	}
	committed := checkWrites(r, rep)
	checkHistory(r, committed, rep)
	checkTokens(r, rep)
	checkOverlaps(r, ivs, committed, rep)
	checkLiveness(r, ivs, rep)
	recovery(r, ivs, rep)
	lossLeads(r, ivs, rep)
	for _, e := range r.Exits {
		if e.Err != "" || (!e.Killed && !e.Stopped) {
			rep.violate("worker %s ended unexpectedly (%s): see its .out file", e.Proc, e.Err)
		}
	}
	for _, c := range r.Crashes {
		rep.violate("worker output: %s", c)
	}
	rep.UpstreamRaces = r.UpstreamRaces
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

// intervals pairs acquire and release events; a hold still open when its
// log stops ends when its process ended.
func intervals(r *Outcome) []Interval {
	exits := exitTimes(r)
	type key struct {
		proc, prim string
		g          int
	}
	open := map[key]*Interval{}
	waited := map[key]int64{}
	var out []Interval
	for _, e := range r.Events {
		k := key{e.Proc, e.Prim, e.G}
		switch e.Ev {
		case EvWait:
			waited[k] = e.T
		case EvAcquire:
			open[k] = &Interval{Proc: e.Proc, Prim: e.Prim, Lib: e.Lib, G: e.G, N: max(e.N, 1), Mode: e.Mode, Tok: e.Tok, Wait: waited[k], Start: e.T}
		case EvRelease:
			if iv := open[k]; iv != nil {
				iv.End, iv.Why = e.T, e.Res
				out = append(out, *iv)
				delete(open, k)
			}
		}
	}
	for k, iv := range open {
		iv.End, iv.Why = r.Stop, "exited"
		if t, ok := exits[k.proc]; ok {
			iv.End = t
		}
		out = append(out, *iv)
	}
	slices.SortFunc(out, func(a, b Interval) int { return cmp.Compare(a.Start, b.Start) })
	return out
}

type writeKey struct {
	proc string
	w    int64
}

// checkWrites matches logged writes with receipts and the final counters,
// and returns the writes that committed.
func checkWrites(r *Outcome, rep *Report) map[writeKey]Receipt {
	committed := map[writeKey]Receipt{}
	peers := peerProcs(r)
	for prim, rs := range r.Receipts {
		// Sorted in commit order, which checkTokens relies on too.
		slices.SortFunc(rs, func(a, b Receipt) int { return cmp.Compare(a.Seq, b.Seq) })
		for _, rc := range rs {
			committed[writeKey{rc.Proc, rc.W}] = rc
		}
		checkValues(prim, rs, peers, rep)
	}
	for _, prim := range Primitives {
		if n := int64(len(r.Receipts[prim]) - rep.PeerLost[prim]); r.Counters[prim] != n {
			rep.violate("%s: final counter %d but %d increments committed (lost or duplicated increment; %d lost to Curator's or Kazoo's holders apart)",
				prim, r.Counters[prim], n, rep.PeerLost[prim])
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
	for k, rc := range committed {
		if !logged[k] && !killed[k.proc] {
			rep.violate("receipt of write %d by %s (value %d) but no such write logged", k.w, k.proc, rc.V)
		}
	}
	return committed
}

// checkValues walks prim's committed increments in commit order: each
// writes the value before it plus one. One that writes less read the counter
// before another holder's write committed, so increments were lost (two
// holders at once). When the write is a Curator or Kazoo worker's, or lands
// right after one (an unguarded write inside a zklock hold, between its read
// and its write), the loss is that library's (its writes carry no token: see
// PeerOverlap), counted in rep.PeerLost, not a violation. Walking rather
// than looking for values written twice attributes a peer's stale write that
// sets the counter back by several increments to the peer alone, not to the
// zklock holders that count again over the values it undid.
func checkValues(prim string, rs []Receipt, peers map[string]bool, rep *Report) {
	dups, cur := 0, int64(0) // the counter is created as 0
	for i, rc := range rs {
		lost := cur + 1 - rc.V
		prev := cur
		cur = rc.V
		switch {
		case lost == 0:
			continue
		case lost < 0:
			rep.violate("%s: value %d written by %s after the counter reached %d: a committed write without a receipt", prim, rc.V, rc.Proc, prev)
			continue
		}
		if peers[rc.Proc] || (i > 0 && peers[rs[i-1].Proc]) {
			rep.PeerLost[prim] += int(lost)
			continue
		}
		if dups++; dups <= 5 {
			rep.violate("%s: value %d written by %s token %d after the counter reached %d (by %s token %d): %d increment(s) lost",
				prim, rc.V, rc.Proc, rc.Tok, prev, rs[i-1].Proc, rs[i-1].Tok, lost)
		}
	}
	if dups > 5 {
		rep.violate("%s: %d more increments that overwrote others", prim, dups-5)
	}
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
