// Package report turns benchmark samples into figures (median, min and max
// over repeats), checks them against zklock's goals, and renders them as a
// markdown table and an SVG chart.
package report

import (
	"math"
	"slices"
	"time"
)

// Figure is one measured quantity over the repeats of a run.
type Figure struct {
	Median float64 `json:"median"`
	Min    float64 `json:"min"`
	Max    float64 `json:"max"`
	N      int     `json:"n"`
}

// Summarize returns the median, min and max of xs, skipping NaNs. The
// median of an even count is the mean of the two middle values. A Figure
// with N == 0 means nothing was measured.
func Summarize(xs []float64) Figure {
	v := make([]float64, 0, len(xs))
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return Figure{}
	}
	slices.Sort(v)
	n := len(v)
	med := v[n/2]
	if n%2 == 0 {
		med = (v[n/2-1] + v[n/2]) / 2
	}
	return Figure{Median: med, Min: v[0], Max: v[n-1], N: n}
}

// Quantile returns the q-quantile of xs (nearest rank; q=1 is the
// largest), NaN when empty.
func Quantile(xs []float64, q float64) float64 {
	if len(xs) == 0 {
		return math.NaN()
	}
	v := slices.Clone(xs)
	slices.Sort(v)
	i := int(math.Ceil(q*float64(len(v)))) - 1
	return v[min(max(i, 0), len(v)-1)]
}

// Median returns the median of xs (NaN when empty), for per-trial latencies.
func Median(xs []float64) float64 {
	f := Summarize(xs)
	if f.N == 0 {
		return math.NaN()
	}
	return f.Median
}

// Sample is what one trial of one implementation measured.
type Sample struct {
	Rate       float64 // acquisitions per second in the measured window
	ReqPerAcq  float64 // ZooKeeper requests per acquisition; NaN if not ZooKeeper
	HandoffUS  float64 // median handoff latency in µs; NaN if not measured
	P50US      float64 // acquire latency (Lock called to Lock returned), µs
	P99US      float64
	MaxUS      float64 // the longest acquire latency in the window
	CPUUS      float64 // client CPU per acquisition in µs (Go clients only); NaN if not measured
	Ops        int     // acquisitions in the window
	Total      int     // acquisitions in the whole trial (warm-up and drain too)
	Violations int     // critical sections that overlapped when they must not
	Errors     int
}

// Result is one implementation in one scenario, over all repeats.
type Result struct {
	Scenario   string    `json:"scenario"`
	Impl       string    `json:"impl"`
	Rate       Figure    `json:"acquisitions_per_s"`
	Rates      []float64 `json:"rates"` // per repeat, in run order, for paired ratios
	ReqPerAcq  *Figure   `json:"zk_requests_per_acquisition,omitempty"`
	HandoffUS  *Figure   `json:"handoff_latency_us,omitempty"`
	P50US      *Figure   `json:"acquire_p50_us,omitempty"`
	P99US      *Figure   `json:"acquire_p99_us,omitempty"`
	MaxUS      *Figure   `json:"acquire_max_us,omitempty"`
	CPUUS      *Figure   `json:"client_cpu_us_per_acquisition,omitempty"`
	Ops        int       `json:"acquisitions_measured"`
	Violations int       `json:"violations"`
	Errors     int       `json:"errors"`
}

// NewResult summarizes the samples of one implementation in one scenario.
func NewResult(scenario, impl string, ss []Sample) Result {
	r := Result{Scenario: scenario, Impl: impl}
	var rate, req, hand, p50, p99, mx, cpu []float64
	for _, s := range ss {
		rate = append(rate, s.Rate)
		r.Rates = append(r.Rates, s.Rate)
		req = append(req, s.ReqPerAcq)
		hand = append(hand, s.HandoffUS)
		p50, p99, mx, cpu = append(p50, s.P50US), append(p99, s.P99US), append(mx, s.MaxUS), append(cpu, s.CPUUS)
		r.Ops += s.Ops
		r.Violations += s.Violations
		r.Errors += s.Errors
	}
	r.Rate = Summarize(rate)
	if f := Summarize(req); f.N > 0 {
		r.ReqPerAcq = &f
	}
	if f := Summarize(hand); f.N > 0 {
		r.HandoffUS = &f
	}
	for _, x := range []struct {
		xs []float64
		to **Figure
	}{{p50, &r.P50US}, {p99, &r.P99US}, {mx, &r.MaxUS}, {cpu, &r.CPUUS}} {
		if f := Summarize(x.xs); f.N > 0 {
			*x.to = &f
		}
	}
	return r
}

// Scenario describes one row of the table.
type Scenario struct {
	ID    string `json:"id"`
	Title string `json:"title"`
}

// Run is a whole benchmark run, as written to results/*.json.
type Run struct {
	Date      time.Time  `json:"date"`
	Mode      string     `json:"mode"` // "full" or "quick"
	Machine   string     `json:"machine"`
	Versions  []string   `json:"versions"`
	Repeats   int        `json:"repeats"`
	Window    string     `json:"window"`
	Duration  string     `json:"duration"`
	Impls     []string   `json:"impls"`
	Scenarios []Scenario `json:"scenarios"`
	Results   []Result   `json:"results"`
	Goals     []Goal     `json:"goals"`
	Held      *Held      `json:"held,omitempty"` // nil: not measured
}

// Held is what locks held at once on one session cost in the client.
type Held struct {
	Locks      int     `json:"locks"`               // held at once, each on its own path
	HeapBytes  float64 `json:"heap_bytes_per_lock"` // live heap after a GC, Mutex handle included
	Goroutines float64 `json:"goroutines_per_lock"`
}

// Find returns the result of impl in scenario, or nil.
func (r *Run) Find(scenario, impl string) *Result {
	for i := range r.Results {
		if r.Results[i].Scenario == scenario && r.Results[i].Impl == impl {
			return &r.Results[i]
		}
	}
	return nil
}
