package chaos

import (
	"cmp"
	"slices"
	"time"
)

// span is a stretch of time.
type span struct{ start, end int64 }

// waits pairs each wait with the acquire or failure that ended it; a wait
// still open when its log stops ends when its process ended.
func waits(r *Outcome, prim string) []span {
	exits := exitTimes(r)
	type key struct {
		proc string
		g    int
	}
	open := map[key]int64{}
	var out []span
	for _, e := range r.Events {
		if e.Prim != prim {
			continue
		}
		k := key{e.Proc, e.G}
		switch e.Ev {
		case EvWait:
			open[k] = e.T
		case EvAcquire, EvWaitFail:
			if t, ok := open[k]; ok {
				out = append(out, span{t, e.T})
				delete(open, k)
			}
		}
	}
	for k, t := range open {
		end, ok := exits[k.proc]
		if !ok {
			end = r.Stop
		}
		out = append(out, span{t, end})
	}
	return out
}

// idle returns the longest stretch within [r.Start, r.Stop] in which
// somebody waited for prim, nobody believed they held it, and no fault was
// active, and when it began.
func idle(r *Outcome, prim string, ivs []Interval) (time.Duration, int64) {
	type edge struct {
		t     int64
		kind  int // 0 wait, 1 hold, 2 fault
		delta int
	}
	var edges []edge
	add := func(kind int, s span) {
		edges = append(edges, edge{s.start, kind, +1}, edge{s.end, kind, -1})
	}
	for _, w := range waits(r, prim) {
		add(0, w)
	}
	for _, iv := range ivs {
		if iv.Prim == prim {
			add(1, span{iv.Start, iv.End})
		}
	}
	for _, f := range r.Faults {
		add(2, span{f.Start, f.End})
	}
	add(2, span{0, r.Start})
	add(2, span{r.Stop, r.Stop + int64(time.Hour)})
	slices.SortStableFunc(edges, func(a, b edge) int { return cmp.Compare(a.t, b.t) })
	var n [3]int
	var longest, from, runStart int64
	idleNow := false
	for _, e := range edges {
		n[e.kind] += e.delta
		now := n[0] > 0 && n[1] == 0 && n[2] == 0
		switch {
		case now && !idleNow:
			runStart = e.t
		case !now && idleNow && e.t-runStart > longest:
			longest, from = e.t-runStart, runStart
		}
		idleNow = now
	}
	return dur(longest), from
}

// checkLiveness fails a primitive left without a holder, while contenders
// waited and no fault was active, for longer than the session timeout plus
// LivenessSlack.
func checkLiveness(r *Outcome, ivs []Interval, rep *Report) {
	bound := r.SessionTimeout + LivenessSlack
	for _, prim := range Primitives {
		d, from := idle(r, prim, ivs)
		rep.Idle[prim] = d
		if d > bound {
			rep.violate("%s: no holder for %v (from %v into the run) while contenders waited and no fault was active (bound %v)",
				prim, d.Round(time.Millisecond), dur(from-r.Start).Round(time.Millisecond), bound)
		}
	}
}

// recovery measures, for each fault, how long after it was undone every
// primitive had been acquired afresh. A fault whose recovery the next fault
// interrupted is counted apart: its figure would measure both.
func recovery(r *Outcome, ivs []Interval, rep *Report) {
	for i, f := range r.Faults {
		rep.Faults[f.Kind]++
		next := r.Stop
		if i+1 < len(r.Faults) {
			next = r.Faults[i+1].Start
		}
		var worst int64
		for _, prim := range Primitives {
			from, _ := slices.BinarySearchFunc(ivs, f.End, func(iv Interval, t int64) int { return cmp.Compare(iv.Start, t) })
			j := slices.IndexFunc(ivs[from:], func(iv Interval) bool { return iv.Prim == prim })
			if j < 0 {
				worst = next - f.End + 1
				break
			}
			worst = max(worst, ivs[from+j].Start-f.End)
		}
		if f.End+worst > next {
			rep.Interrupted[f.Kind]++
		} else {
			rep.Recovery[f.Kind] = append(rep.Recovery[f.Kind], dur(worst))
		}
	}
}
