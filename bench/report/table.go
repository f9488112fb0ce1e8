package report

import (
	"fmt"
	"math"
	"strings"
)

// Num formats x with about three significant digits and no exponent.
func Num(x float64) string {
	switch a := math.Abs(x); {
	case math.IsNaN(x):
		return "—"
	case a >= 100:
		return fmt.Sprintf("%.0f", x)
	case a >= 10:
		return fmt.Sprintf("%.1f", x)
	default:
		return fmt.Sprintf("%.2f", x)
	}
}

func cell(f *Figure) string {
	if f == nil || f.N == 0 {
		return "—"
	}
	if f.N == 1 {
		return "**" + Num(f.Median) + "**"
	}
	return fmt.Sprintf("**%s** (%s–%s)", Num(f.Median), Num(f.Min), Num(f.Max))
}

// Markdown renders the run as markdown: acquisitions per second, ZooKeeper
// requests per acquisition, handoff latency and the goals.
func Markdown(run *Run) string {
	var b strings.Builder
	fmt.Fprintf(&b, "Acquisitions per second (lock, empty critical section, unlock), median (min–max) of %d interleaved repeats of %s each:\n\n", run.Repeats, run.Window)
	b.WriteString(table(run, run.Impls, func(r *Result) *Figure { return &r.Rate }))
	if r := rowsWith(run, func(r *Result) *Figure { return r.ReqPerAcq }); len(r) > 0 {
		b.WriteString("\nZooKeeper requests per acquisition (the server's `mntr` `zk_packets_received` over the whole trial, less the keep-alive pings of the connected clients as measured while idle), median (min–max):\n\n")
		b.WriteString(table(run, implsWith(run, r), func(r *Result) *Figure { return r.ReqPerAcq }))
	}
	if r := rowsWith(run, func(r *Result) *Figure { return r.HandoffUS }); len(r) > 0 {
		b.WriteString("\nHandoff latency in µs (the holder letting go, as it calls Unlock, to the next Lock returning, median over the trial), median (min–max) over repeats:\n\n")
		b.WriteString(table(runWithRows(run, r), implsWith(run, r), func(r *Result) *Figure { return r.HandoffUS }))
	}
	for _, t := range []struct {
		caption string
		f       func(*Result) *Figure
	}{
		{"Acquire latency p50 in µs (Lock called to Lock returned, over the measured window), median (min–max) over repeats:", func(r *Result) *Figure { return r.P50US }},
		{"Acquire latency p99 in µs, median (min–max) over repeats:", func(r *Result) *Figure { return r.P99US }},
		{"Longest acquire latency in µs (the longest any client waited in the window; in the cohort rows, how long a waiter of another session can wait), median (min–max) over repeats:", func(r *Result) *Figure { return r.MaxUS }},
		{"Client CPU per acquisition in µs (this process's user+system time over the trial divided by its acquisitions; Go clients only: Curator and Kazoo run in other processes), median (min–max):", func(r *Result) *Figure { return r.CPUUS }},
	} {
		if r := rowsWith(run, t.f); len(r) > 0 {
			b.WriteString("\n" + t.caption + "\n\n")
			b.WriteString(table(runWithRows(run, r), implsWith(run, r), t.f))
		}
	}
	if bad := problems(run); bad != "" {
		b.WriteString("\n" + bad)
	}
	if len(run.Goals) > 0 {
		b.WriteString("\nGoals:\n\n| Goal | Target | Measured | |\n|---|---|---|---|\n")
		for _, g := range run.Goals {
			verdict := "not measured"
			if g.Measured && g.Met {
				verdict = "met"
			} else if g.Measured {
				verdict = "**missed**"
			}
			fmt.Fprintf(&b, "| %s | %s | %s | %s |\n", g.Name, g.Target, g.Detail, verdict)
		}
	}
	return b.String()
}

func table(run *Run, impls []string, f func(*Result) *Figure) string {
	var b strings.Builder
	b.WriteString("| Scenario |")
	for _, im := range impls {
		b.WriteString(" " + im + " |")
	}
	b.WriteString("\n|---|" + strings.Repeat("---:|", len(impls)) + "\n")
	for _, sc := range run.Scenarios {
		var row strings.Builder
		any := false
		for _, im := range impls {
			var fig *Figure
			if r := run.Find(sc.ID, im); r != nil {
				fig = f(r)
			}
			any = any || (fig != nil && fig.N > 0)
			row.WriteString(" " + cell(fig) + " |")
		}
		if any {
			b.WriteString("| " + sc.Title + " |" + row.String() + "\n")
		}
	}
	return b.String()
}

// rowsWith returns the results that have the figure f.
func rowsWith(run *Run, f func(*Result) *Figure) []Result {
	var out []Result
	for _, r := range run.Results {
		if fig := f(&r); fig != nil && fig.N > 0 {
			out = append(out, r)
		}
	}
	return out
}

// implsWith keeps run's implementation order, restricted to those in rs.
func implsWith(run *Run, rs []Result) []string {
	var out []string
	for _, im := range run.Impls {
		for _, r := range rs {
			if r.Impl == im {
				out = append(out, im)
				break
			}
		}
	}
	return out
}

func runWithRows(run *Run, rs []Result) *Run {
	c := *run
	c.Results = rs
	return &c
}

// problems lists every result with exclusion violations or errors: a run
// that has any is not a valid measurement of that cell.
func problems(run *Run) string {
	var b strings.Builder
	for _, r := range run.Results {
		if r.Violations > 0 || r.Errors > 0 {
			fmt.Fprintf(&b, "- %s, %s: %d exclusion violations, %d errors\n", r.Impl, r.Scenario, r.Violations, r.Errors)
		}
	}
	if b.Len() == 0 {
		return "Every critical section was checked for exclusion: no violations, no errors.\n"
	}
	return "Exclusion violations or errors (those cells are not valid):\n\n" + b.String()
}
