package chaos

import (
	"context"
	"fmt"
	"runtime/metrics"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/zklock/zklock/zktest"
)

// Sample is one reading of what a process holds: a worker's live heap and
// goroutines, or the ensemble's nodes and watches (Src "servers").
type Sample struct {
	Src     string `json:"src"` // a worker incarnation ("w2.1") or "servers"
	T       int64  `json:"t"`
	Heap    int64  `json:"heap,omitempty"`    // worker: live heap after the last GC, bytes
	Gor     int64  `json:"gor,omitempty"`     // worker: goroutines
	Nodes   int64  `json:"nodes,omitempty"`   // servers: znodes (the leader's count), less the receipts awaiting harvest
	Watches int64  `json:"watches,omitempty"` // servers: watches, summed over the servers
}

// SampleEvery is how often workers and the coordinator take a Sample.
const SampleEvery = 10 * time.Second

// GrowthSpan is the shortest sampled life a source must have for the
// checker to judge its growth: shorter runs and incarnations (most workers
// are killed and restarted by faults) are reported, not judged. A soak
// keeps some workers alive for the whole run (Config.Keep) so that they are
// judged.
const GrowthSpan = 20 * time.Minute

// growthSlack is, per quantity, the absolute growth from the first tenth
// of a source's life to the last that is never called growth: reconnects,
// queues and GC timing move these figures by that much without a leak.
var growthSlack = map[string]int64{"heap": 8 << 20, "goroutines": 25, "nodes": 100, "watches": 100}

// samplePath is where a worker whose log is logPath writes its samples.
func samplePath(logPath string) string { return strings.TrimSuffix(logPath, ".jsonl") + ".res.jsonl" }

// sampleWorker logs the live heap and goroutine count of this process
// every SampleEvery until ctx ends; a log it cannot write goes to fail.
func sampleWorker(ctx context.Context, proc, path string, fail func(error)) {
	log, err := CreateLog(path)
	if err != nil {
		fail(err)
		return
	}
	defer log.Close()
	ms := []metrics.Sample{{Name: "/gc/heap/live:bytes"}, {Name: "/sched/goroutines:goroutines"}}
	for i := 0; i < 1_000_000 && ctx.Err() == nil; i++ {
		metrics.Read(ms)
		if err := log.Add(Sample{Src: proc, T: Now(), Heap: int64(ms[0].Value.Uint64()), Gor: int64(ms[1].Value.Uint64())}); err != nil {
			fail(err)
			return
		}
		sleep(ctx, SampleEvery)
	}
}

// sampleServers takes one reading of the ensemble: the leader's znode count
// and the watches of every server. It fails (the round is skipped) unless
// every server answers, so a sum never misses a server's share.
func sampleServers(ctx context.Context, c *zktest.Cluster) (Sample, error) {
	s := Sample{Src: "servers"}
	for i := 0; i < c.Len(); i++ {
		m, err := c.Mntr(ctx, i)
		if err != nil {
			return s, err
		}
		w, err := strconv.ParseInt(m["zk_watch_count"], 10, 64)
		if err != nil {
			return s, fmt.Errorf("server %d zk_watch_count: %w", i, err)
		}
		s.Watches += w
		if m["zk_server_state"] == "leader" || m["zk_server_state"] == "standalone" {
			if s.Nodes, err = strconv.ParseInt(m["zk_znode_count"], 10, 64); err != nil {
				return s, fmt.Errorf("server %d zk_znode_count: %w", i, err)
			}
		}
	}
	if s.Nodes == 0 {
		return s, fmt.Errorf("no leader answered")
	}
	s.T = Now()
	return s, nil
}

// ReadSamples reads a sample log.
func ReadSamples(path string) ([]Sample, error) { return readFile[Sample](path) }

// Usage is one source's resources over its sampled life: the median of the
// first and of the last tenth of its samples, and the highest reading, by
// quantity ("heap", "goroutines", "nodes", "watches").
type Usage struct {
	Src     string
	Samples int
	Span    time.Duration
	First   map[string]int64
	Last    map[string]int64
	Max     map[string]int64
	Judged  bool // long enough for growth to be judged (GrowthSpan)
}

// resources summarizes the samples by source and reports, as violations,
// growth of any quantity in a source that lived GrowthSpan or longer: the
// last tenth's median above the first tenth's by more than a tenth plus
// the slack.
func resources(r *Outcome, rep *Report) {
	by := map[string][]Sample{}
	for _, s := range r.Samples {
		by[s.Src] = append(by[s.Src], s)
	}
	for _, src := range slices.Sorted(func(yield func(string) bool) {
		for k := range by {
			if !yield(k) {
				return
			}
		}
	}) {
		ss := by[src]
		slices.SortFunc(ss, func(a, b Sample) int { return int(a.T - b.T) })
		u := Usage{Src: src, Samples: len(ss), Span: dur(ss[len(ss)-1].T - ss[0].T),
			First: map[string]int64{}, Last: map[string]int64{}, Max: map[string]int64{}}
		u.Judged = u.Span >= GrowthSpan && len(ss) >= 20
		tenth := max(1, len(ss)/10)
		for q, get := range quantities {
			vals := func(part []Sample) []int64 {
				out := make([]int64, len(part))
				for i, s := range part {
					out[i] = get(s)
				}
				return out
			}
			all := vals(ss)
			if slices.Max(all) == 0 {
				continue // not a quantity of this source
			}
			u.First[q], u.Last[q], u.Max[q] = median(vals(ss[:tenth])), median(vals(ss[len(ss)-tenth:])), slices.Max(all)
			if u.Judged && u.Last[q] > u.First[q]+u.First[q]/10+growthSlack[q] {
				rep.violate("%s grew over %v: %s %d -> %d (median of the first and last tenth of %d samples)",
					src, u.Span.Round(time.Minute), q, u.First[q], u.Last[q], len(ss))
			}
		}
		rep.Usage = append(rep.Usage, u)
	}
}

var quantities = map[string]func(Sample) int64{
	"heap":       func(s Sample) int64 { return s.Heap },
	"goroutines": func(s Sample) int64 { return s.Gor },
	"nodes":      func(s Sample) int64 { return s.Nodes },
	"watches":    func(s Sample) int64 { return s.Watches },
}

func median(vs []int64) int64 {
	vs = slices.Clone(vs)
	slices.Sort(vs)
	return vs[len(vs)/2]
}

// usageString prints the judged sources in full and the short-lived worker
// incarnations as one line.
func usageString(us []Usage) string {
	var b strings.Builder
	var short, shortHeap, shortGor int64
	for _, u := range us {
		if !u.Judged {
			if u.Src != "servers" {
				short++
				shortHeap, shortGor = max(shortHeap, u.Max["heap"]), max(shortGor, u.Max["goroutines"])
				continue
			}
		}
		fmt.Fprintf(&b, "  %-8s %4d samples over %-9v", u.Src, u.Samples, u.Span.Round(time.Second))
		for _, q := range []string{"heap", "goroutines", "nodes", "watches"} {
			if _, ok := u.Max[q]; ok {
				fmt.Fprintf(&b, " %s %s -> %s (max %s)", q, show(q, u.First[q]), show(q, u.Last[q]), show(q, u.Max[q]))
			}
		}
		if !u.Judged {
			fmt.Fprintf(&b, " (under %v: not judged)", GrowthSpan)
		}
		b.WriteString("\n")
	}
	if short > 0 {
		fmt.Fprintf(&b, "  %d worker incarnations under %v (not judged): max heap %s, max goroutines %d\n",
			short, GrowthSpan, show("heap", shortHeap), shortGor)
	}
	return b.String()
}

func show(q string, v int64) string {
	if q == "heap" {
		return fmt.Sprintf("%.1fMiB", float64(v)/(1<<20))
	}
	return strconv.FormatInt(v, 10)
}
