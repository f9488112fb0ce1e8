package report

import (
	"fmt"
	"math"
	"strings"
)

// Costs renders the README's "What it costs" list from run: server
// requests per acquisition, heap and goroutines per held lock, client CPU
// per acquisition. note is what else ran on the machine (may be empty).
// Every figure comes from run; one it lacks reads "not measured".
func Costs(run *Run, note string) string {
	var b strings.Builder
	if note = strings.TrimSpace(note); note != "" {
		note = " " + note
	}
	fmt.Fprintf(&b, "From the last `make bench` (%s run, %s, on %s; %s).%s The tables are in [docs/benchmarks.md](docs/benchmarks.md).\n\n",
		run.Mode, run.Date.Format("2006-01-02 15:04 MST"), run.Machine, firstVersion(run), note)
	req := func(scen, impl string) string {
		if r := run.Find(scen, impl); r != nil && r.ReqPerAcq != nil {
			return Num(r.ReqPerAcq.Median)
		}
		return "not measured"
	}
	var contended []string
	for _, id := range ContendedIDs {
		if r := run.Find(id, "zklock"); r != nil && r.ReqPerAcq != nil {
			contended = append(contended, fmt.Sprintf("%s at %s", Num(r.ReqPerAcq.Median), strings.TrimPrefix(id, "c")))
		}
	}
	cont := "not measured"
	if len(contended) > 0 {
		cont = strings.Join(contended, ", ")
	}
	fmt.Fprintf(&b, "- **Server requests per acquisition** (the server's packets received, less pings): **%s uncontended** "+
		"(the raw minimum of create, list, delete is %s; zklock pipelines the list behind the create, so two round trips) "+
		"and, contended on one lock, **%s clients**, against %s for go-zookeeper's and %s for Curator's lock at 16 clients. "+
		"A new lock path adds one create per missing parent (%s requests with one parent missing, %s with three). "+
		"Cohorting (`WithCohort`, docs/recipes.md) brings 16 goroutines of one session to %s per acquisition.\n",
		req("uncontended", "zklock"), req("uncontended", "zk-raw"), cont,
		req("c16", "go-zookeeper"), req("c16", "curator"),
		req("fresh1", "zklock"), req("fresh3", "zklock"), req("g16", "zklock-cohort"))
	if h := run.Held; h != nil {
		fmt.Fprintf(&b, "- **Memory per held lock**: **%.0f B** of heap, its `Mutex` handle included, and %.4f goroutines "+
			"(%d locks held at once on one session, measured by the same run); a waiter adds one watch on the node ahead of it. "+
			"Share one `Session` per process.\n", h.HeapBytes, perLock(h.Goroutines), h.Locks)
	} else {
		b.WriteString("- **Memory per held lock**: not measured in this run.\n")
	}
	cpu := func(scen, impl string) string {
		if r := run.Find(scen, impl); r != nil && r.CPUUS != nil {
			return Num(r.CPUUS.Median) + " µs"
		}
		return "not measured"
	}
	fmt.Fprintf(&b, "- **Client CPU per acquisition**: %s uncontended (go-zookeeper's lock %s), %s with 16 clients on one lock (%s); "+
		"every row's figure is in docs/benchmarks.md.\n",
		cpu("uncontended", "zklock"), cpu("uncontended", "go-zookeeper"), cpu("c16", "zklock"), cpu("c16", "go-zookeeper"))
	return b.String()
}

// firstVersion is the run's first version string (the ZooKeeper server's).
func firstVersion(run *Run) string {
	if len(run.Versions) == 0 {
		return "versions unknown"
	}
	return run.Versions[0]
}

// perLock drops the sign of a count per lock that rounds to zero at four
// decimals (a session goroutine ending during the measure reads -0.0000).
func perLock(x float64) float64 {
	if math.Abs(x) < 5e-5 {
		return 0
	}
	return x
}
