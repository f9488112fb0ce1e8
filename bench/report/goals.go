package report

import (
	"fmt"
	"math"
)

// Goal is one of zklock's published performance goals, checked against a run.
type Goal struct {
	Name     string  `json:"name"`
	Target   string  `json:"target"`
	Value    float64 `json:"value"` // 0 when not measured
	Measured bool    `json:"measured"`
	Met      bool    `json:"met"`
	Detail   string  `json:"detail"`
}

// PairedRatio is the median over repeats of a's rate divided by b's in the
// same repeat. Repeats interleave the implementations, so each pair ran
// under nearly the same load; the ratio holds better than one of medians.
func PairedRatio(a, b *Result) (Figure, bool) {
	if a == nil || b == nil {
		return Figure{}, false
	}
	n := min(len(a.Rates), len(b.Rates))
	var rs []float64
	for i := range n {
		if b.Rates[i] > 0 {
			rs = append(rs, a.Rates[i]/b.Rates[i])
		}
	}
	f := Summarize(rs)
	return f, f.N > 0
}

// Goals evaluates the goals of issue 7 on run. Scenario IDs follow the
// runner: "uncontended", "c16", "sem", "handoff-10", "handoff-1000" and
// the contended ones "c2" ... "c256" for requests per acquisition.
func Goals(run *Run) []Goal {
	var gs []Goal
	ratio := func(name, target, scen, a, b string, min float64) {
		g := Goal{Name: name, Target: target}
		f, ok := PairedRatio(run.Find(scen, a), run.Find(scen, b))
		if ok {
			g.Measured, g.Value, g.Met = true, f.Median, f.Median >= min
			g.Detail = fmt.Sprintf("%.2fx (repeats %.2f–%.2f)", f.Median, f.Min, f.Max)
		} else {
			g.Detail = "not measured in this run"
		}
		gs = append(gs, g)
	}
	ratio("uncontended vs raw minimum", ">= 0.95x", "uncontended", "zklock", "zk-raw", 0.95)
	ratio("16 clients, one lock, vs Curator", ">= 1.5x", "c16", "zklock", "curator", 1.5)
	ratio("16 clients, one lock, vs go-zookeeper", ">= 1.15x", "c16", "zklock", "go-zookeeper", 1.15)
	gs = append(gs, requestsGoal(run))
	gs = append(gs, handoffGoal(run))
	ratio("semaphore (limit 2) vs Curator", ">= 2.5x", "sem", "zklock", "curator", 2.5)
	return gs
}

// ContendedIDs are the one-lock scenarios whose requests per acquisition
// must stay flat.
var ContendedIDs = []string{"c2", "c4", "c16", "c64", "c256"}

func requestsGoal(run *Run) Goal {
	g := Goal{Name: "ZooKeeper requests per contended acquisition", Target: "<= 5, flat from 2 to 256 clients"}
	hi, qlo, qhi := math.Inf(-1), math.Inf(1), math.Inf(-1)
	var seen []string
	for _, id := range ContendedIDs {
		r := run.Find(id, "zklock")
		if r == nil || r.ReqPerAcq == nil {
			continue
		}
		v := r.ReqPerAcq.Median
		hi = math.Max(hi, v)
		if id != "c2" {
			qlo, qhi = math.Min(qlo, v), math.Max(qhi, v)
		}
		seen = append(seen, fmt.Sprintf("%s %.2f", id, v))
	}
	if len(seen) == 0 {
		g.Detail = "not measured in this run"
		return g
	}
	// Flat: no growth with the number of clients. With 2 clients some
	// acquisitions find the lock free (3 requests), so the plateau is
	// judged from 4 clients on, where every acquisition queues: the largest
	// there within 10% of the smallest, and nothing anywhere above 5.
	g.Measured, g.Value = true, hi
	g.Met = hi <= 5 && (math.IsInf(qlo, 1) || qhi <= 1.1*qlo)
	g.Detail = fmt.Sprintf("max %.2f (%s)", hi, join(seen))
	return g
}

func handoffGoal(run *Run) Goal {
	g := Goal{Name: "handoff rate, 1000 waiters vs 10", Target: ">= 0.8x"}
	f, ok := PairedRatio(run.Find("handoff-1000", "zklock"), run.Find("handoff-10", "zklock"))
	if !ok {
		g.Detail = "not measured in this run"
		return g
	}
	g.Measured, g.Value, g.Met = true, f.Median, f.Median >= 0.8
	g.Detail = fmt.Sprintf("%.2fx (repeats %.2f–%.2f)", f.Median, f.Min, f.Max)
	return g
}

func join(ss []string) string {
	out := ""
	for i, s := range ss {
		if i > 0 {
			out += ", "
		}
		out += s
	}
	return out
}
