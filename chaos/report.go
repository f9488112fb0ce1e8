package chaos

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"
)

// Report is a chaos run's verdict and figures.
type Report struct {
	Duration       time.Duration              // from the first fault's scheduling to the stop
	Faults         map[string]int             // injected, by kind
	Recovery       map[string][]time.Duration // fault undone to every primitive acquired afresh, by kind
	Interrupted    map[string]int             // faults the next fault (or the stop) came before recovery of
	Acquisitions   map[string]int             // by primitive
	Counters       map[string]int64           // committed increments, by primitive
	Writes         map[string]int             // by outcome
	Idle           map[string]time.Duration   // longest no-holder stretch while contenders waited, outside faults
	PausedOverlaps []PausedOverlap
	PeerOverlaps   []PeerOverlap              // Curator's and Kazoo's holders after their node was gone: reported, not counted
	PeerLost       map[string]int             // increments lost to Curator's and Kazoo's holders, by primitive
	LossLeads      []time.Duration            // loss signal to the next conflicting acquisition (see lossLeads)
	LeadsByKind    map[string][]time.Duration // LossLeads by the fault in whose window the signal came
	DeadlineLeads  []time.Duration            // logged ownership deadline to the next conflicting acquisition (see deadlineLeads)
	PeerMargins    []time.Duration            // a peer's node deleted to the rival's grant, over PeerOverlaps with a rival
	NodeLeads      []time.Duration            // a released peer node seen gone to the next conflicting zklock grant (see watcherLeads)
	Usage          []Usage                    // resources by worker incarnation and of the servers
	ServerLost     []Reuse                    // proof that the servers lost committed transactions
	PG             *PGFigures                 // the PostgreSQL resource's writes; nil if the run had none
	Violations     []string

	// Frozen is how many paused overlaps had their freeze found; over them,
	// the soonest a rival came after the freeze began and the longest a
	// holder believed after its resume (see MaxBeliefAfterResume).
	Frozen                          int
	FrozenRivalMin, FrozenBeliefMax time.Duration

	start   int64         // the run's Start, for times in the text
	timeout time.Duration // the run's session timeout
}

func newReport(r *Outcome) *Report {
	return &Report{
		Duration: dur(r.Stop - r.Start), Faults: map[string]int{}, Recovery: map[string][]time.Duration{},
		Interrupted: map[string]int{}, Acquisitions: map[string]int{}, Counters: r.Counters,
		Writes: map[string]int{}, Idle: map[string]time.Duration{}, PeerLost: map[string]int{},
		LeadsByKind: map[string][]time.Duration{}, start: r.Start, timeout: r.SessionTimeout,
	}
}

// OK reports whether the run had no violation.
func (r *Report) OK() bool { return len(r.Violations) == 0 }

func (r *Report) violate(format string, args ...any) {
	r.Violations = append(r.Violations, fmt.Sprintf(format, args...))
}

// Fenced reports how many paused overlaps there were and in how many fencing
// refused every write the paused holder sent after its rival acquired.
func (r *Report) Fenced() (overlaps, fenced int) {
	for _, po := range r.PausedOverlaps {
		if po.Committed == 0 {
			fenced++
		}
	}
	return len(r.PausedOverlaps), fenced
}

// String prints the report.
func (r *Report) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "chaos report: %v of faults\n", r.Duration.Round(time.Second))
	fmt.Fprintf(&b, "%-18s %6s %10s %10s %22s %s\n", "fault", "count", "median", "max", "loss lead min/median",
		"(recovery: undone -> every primitive acquired again; lead: loss signal -> next conflicting holder)")
	for _, k := range ReportKinds {
		if r.Faults[k] == 0 && !slices.Contains(FaultKinds, k) {
			continue
		}
		ds := slices.Clone(r.Recovery[k])
		slices.Sort(ds)
		med, mx := "-", "-"
		if len(ds) > 0 {
			med, mx = ds[len(ds)/2].Round(time.Millisecond).String(), ds[len(ds)-1].Round(time.Millisecond).String()
		}
		lead := "-"
		if ls := slices.Sorted(slices.Values(r.LeadsByKind[k])); len(ls) > 0 {
			lead = fmt.Sprintf("%v/%v (%d)", ls[0].Round(time.Millisecond), ls[len(ls)/2].Round(time.Millisecond), len(ls))
		}
		fmt.Fprintf(&b, "%-18s %6d %10s %10s %22s", k, r.Faults[k], med, mx, lead)
		if n := r.Interrupted[k]; n > 0 {
			fmt.Fprintf(&b, " (%d of them interrupted by the next fault: not in the figures)", n)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%-10s %12s %12s %14s\n", "primitive", "acquisitions", "increments", "longest idle")
	for _, p := range Primitives {
		fmt.Fprintf(&b, "%-10s %12d %12d %14v\n", p, r.Acquisitions[p], r.Counters[p], r.Idle[p].Round(time.Millisecond))
	}
	fmt.Fprintf(&b, "writes: %d ok, %d rejected, %d unknown (%d of them committed), %d skipped after loss\n",
		r.Writes[ResOK], r.Writes[ResRejected], r.Writes[ResUnknown], r.Writes["unknown, committed"], r.Writes[ResSkipped])
	if ds := slices.Sorted(slices.Values(r.LossLeads)); len(ds) > 0 {
		fmt.Fprintf(&b, "loss signal ahead of the next holder (%d holds that saw their loss while running): min %v, median %v\n",
			len(ds), ds[0].Round(time.Millisecond), ds[len(ds)/2].Round(time.Millisecond))
	}
	if ds := slices.Sorted(slices.Values(r.DeadlineLeads)); len(ds) > 0 {
		fmt.Fprintf(&b, "ownership deadline ahead of the next holder (%d holds that ended by their loss or a kill): min %v, median %v\n",
			len(ds), ds[0].Round(time.Millisecond), ds[len(ds)/2].Round(time.Millisecond))
	}
	if pg := r.PG; pg != nil {
		var committed int
		for _, n := range pg.Committed {
			committed += n
		}
		fmt.Fprintf(&b, "postgres, written through the fence: %d committed (%v), %d refused as stale (%d of them by holders frozen during their hold), "+
			"%d unknown (%d of them committed), %d skipped after loss; the checker requires every resource's committed tokens never to go down\n",
			committed, pg.Committed, pg.Writes[ResRefused], pg.RefusedFrozen, pg.Writes[ResUnknown], pg.Writes["unknown, committed"], pg.Writes[ResSkipped])
	}
	n, f := r.Fenced()
	fmt.Fprintf(&b, "believed overlaps of paused holders: %d; fencing refused every later write in %d of them\n", n, f)
	if r.Frozen > 0 {
		fmt.Fprintf(&b, "  frozen holders (%d): the soonest rival %v after the freeze began (bound %v), the longest belief %v after the resume (bound %v)\n",
			r.Frozen, r.FrozenRivalMin.Round(time.Millisecond), RivalAfterFreeze(r.timeout), r.FrozenBeliefMax.Round(100*time.Microsecond), MaxBeliefAfterResume)
	}
	pos := slices.SortedFunc(slices.Values(r.PausedOverlaps), func(a, b PausedOverlap) int {
		return cmp.Or(cmp.Compare(a.Prim, b.Prim), cmp.Compare(a.Paused.Start, b.Paused.Start))
	})
	for _, po := range pos {
		fmt.Fprintf(&b, "  %s: paused %s (until %s) vs %s and %d more: %d write(s) after, %d committed\n", po.Prim,
			describe(po.Paused), po.Paused.Why, describe(po.Rival), po.Rivals-1, po.Writes, po.Committed)
	}
	if len(r.PeerOverlaps) > 0 || len(r.PeerLost) > 0 {
		var writes, committed int
		for _, co := range r.PeerOverlaps {
			writes, committed = writes+co.Writes, committed+co.Committed
		}
		fmt.Fprintf(&b, "Curator's and Kazoo's, not zklock's (their holders are not told their node is gone, and their writes carry no token): "+
			"%d overlaps of such a holder with a later holder; %d writes sent after the rival acquired, %d committed; "+
			"increments lost: %v\n", len(r.PeerOverlaps), writes, committed, r.PeerLost)
		for i, co := range r.PeerOverlaps {
			if i == 10 {
				fmt.Fprintf(&b, "  ... and %d more\n", len(r.PeerOverlaps)-i)
				break
			}
			fmt.Fprintf(&b, "  %s: %s held on: %s; %s acquired while it believed it held; %d write(s) after, %d committed\n",
				co.Prim, co.Peer.Proc, co.Evidence, describe(co.Rival), co.Writes, co.Committed)
		}
		if ms := slices.Sorted(slices.Values(r.PeerMargins)); len(ms) > 0 {
			fmt.Fprintf(&b, "  their node deleted ahead of the rival's grant: min %v, median %v\n",
				ms[0].Round(time.Microsecond), ms[len(ms)/2].Round(time.Microsecond))
		}
	}
	if ls := slices.Sorted(slices.Values(r.NodeLeads)); len(ls) > 0 {
		fmt.Fprintf(&b, "node watcher: a released peer node seen gone ahead of the next zklock grant (%d releases): min %v, median %v (tolerance %v)\n",
			len(ls), ls[0].Round(time.Microsecond), ls[len(ls)/2].Round(time.Microsecond), PeerLag)
		if ls[0] < -PeerLag {
			fmt.Fprintf(&b, "  BEYOND THE TOLERANCE: the watcher saw a node gone %v after a grant that needed it gone; its excuses of this run are suspect\n",
				(-ls[0]).Round(time.Microsecond))
		}
	}
	if len(r.Usage) > 0 {
		fmt.Fprintf(&b, "resources (median of the first tenth of the samples -> of the last tenth):\n%s", usageString(r.Usage))
	}
	if len(r.ServerLost) > 0 {
		fmt.Fprintf(&b, "THE SERVERS LOST COMMITTED TRANSACTIONS (ZooKeeper's, not zklock's; violations near these times are their consequences): "+
			"%d receipt sequence numbers given to two writes\n", len(r.ServerLost))
		for i, u := range r.ServerLost {
			if i == 10 {
				fmt.Fprintf(&b, "  ... and %d more\n", len(r.ServerLost)-i)
				break
			}
			fmt.Fprintf(&b, "  %s: receipt %d given to %s and to %s (seen at %.3fs)\n", u.Prim, u.Seq, u.First, u.Second,
				float64(u.At-r.start)/1e9)
		}
	}
	fmt.Fprintf(&b, "violations: %d\n", len(r.Violations))
	for i, v := range r.Violations {
		if i == 50 {
			fmt.Fprintf(&b, "  ... and %d more\n", len(r.Violations)-i)
			break
		}
		fmt.Fprintf(&b, "  %s\n", v)
	}
	return b.String()
}
