package report

import (
	"encoding/xml"
	"math"
	"strings"
	"testing"
)

func TestSummarize(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []float64
		want Figure
	}{
		{"empty", nil, Figure{}},
		{"odd", []float64{3, 1, 2}, Figure{Median: 2, Min: 1, Max: 3, N: 3}},
		{"even", []float64{4, 1, 3, 2}, Figure{Median: 2.5, Min: 1, Max: 4, N: 4}},
		{"nan skipped", []float64{math.NaN(), 5}, Figure{Median: 5, Min: 5, Max: 5, N: 1}},
		{"all nan", []float64{math.NaN()}, Figure{}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := Summarize(tc.in); got != tc.want {
				t.Errorf("Summarize(%v) = %+v, want %+v", tc.in, got, tc.want)
			}
		})
	}
}

func TestNum(t *testing.T) {
	for in, want := range map[float64]string{1234.4: "1234", 45.67: "45.7", 3.14159: "3.14", math.NaN(): "—"} {
		if got := Num(in); got != want {
			t.Errorf("Num(%v) = %q, want %q", in, got, want)
		}
	}
}

func sampleRun() *Run {
	s := func(rates ...float64) []Sample {
		var out []Sample
		for _, r := range rates {
			out = append(out, Sample{Rate: r, ReqPerAcq: 5, HandoffUS: math.NaN(), Ops: 10,
				P50US: math.NaN(), P99US: math.NaN(), MaxUS: math.NaN(), CPUUS: math.NaN()})
		}
		return out
	}
	run := &Run{Mode: "quick", Machine: "2 cores", Repeats: 3, Window: "1s",
		Impls:     []string{"zk-raw", "zklock", "curator", "go-zookeeper"},
		Scenarios: []Scenario{{ID: "uncontended", Title: "uncontended"}, {ID: "c16", Title: "16 clients <one lock>"}}}
	withP99 := func(ss []Sample, us float64) []Sample {
		for i := range ss {
			ss[i].P99US = us
		}
		return ss
	}
	run.Results = []Result{
		NewResult("uncontended", "zk-raw", s(1000, 1000, 1000)),
		NewResult("uncontended", "zklock", s(990, 900, 1100)),
		NewResult("c16", "zklock", withP99(s(2000, 1000, 3000), 100)),
		NewResult("c16", "curator", s(1000, 500, 1500)),
		NewResult("c16", "go-zookeeper", withP99(s(2000, 1000, 1000), 200)),
	}
	run.Goals = Goals(run)
	return run
}

func TestGoals(t *testing.T) {
	run := sampleRun()
	byName := map[string]Goal{}
	for _, g := range run.Goals {
		byName[g.Name] = g
	}
	// Paired per repeat: 0.99, 0.9, 1.1 → median 0.99, under 1.2.
	if g := byName["uncontended vs raw minimum"]; !g.Measured || g.Met || math.Abs(g.Value-0.99) > 1e-9 {
		t.Errorf("uncontended goal = %+v, want missed at 0.99", g)
	}
	// 2, 2, 2 against Curator; 1, 1, 3 against go-zookeeper.
	if g := byName["16 clients, one lock, vs Curator"]; !g.Met || g.Value != 2 {
		t.Errorf("Curator goal = %+v, want met at 2", g)
	}
	if g := byName["16 clients, one lock, vs go-zookeeper"]; g.Met || g.Value != 1 {
		t.Errorf("go-zookeeper goal = %+v, want missed at 1", g)
	}
	if g := byName["semaphore (limit 2) vs Curator"]; g.Measured {
		t.Errorf("semaphore goal = %+v, want not measured", g)
	}
	// 5 requests in the sample: over the 4.0 target.
	if g := byName["ZooKeeper requests per contended acquisition"]; !g.Measured || g.Met || g.Value != 5 {
		t.Errorf("requests goal = %+v, want missed at 5", g)
	}
	// go-zookeeper runs only c16 beside zklock: paired 1, 1, 3.
	if g := byName["no row where zklock is below go-zookeeper"]; !g.Measured || !g.Met || g.Value != 1 {
		t.Errorf("no-row-below goal = %+v, want met at 1", g)
	}
	if g := byName["heap per held lock, 100,000 held on one session"]; g.Measured {
		t.Errorf("held goal = %+v, want not measured", g)
	}
	run.Held = &Held{Locks: 100000, HeapBytes: 401}
	if g := heldGoal(run); !g.Measured || g.Met {
		t.Errorf("held goal at 401 B = %+v, want missed", g)
	}
	run.Held.HeapBytes = 400
	if g := heldGoal(run); !g.Met {
		t.Errorf("held goal at 400 B = %+v, want met", g)
	}
	// p99: 100 µs against go-zookeeper's 200 µs.
	if g := byName["16 clients, one lock: p99 acquire latency vs go-zookeeper's"]; !g.Measured || !g.Met || g.Value != 0.5 {
		t.Errorf("p99 goal = %+v, want met at 0.5", g)
	}
}

func TestMarkdown(t *testing.T) {
	md := Markdown(sampleRun())
	for _, want := range []string{
		"| Scenario | zk-raw | zklock | curator | go-zookeeper |",
		"| uncontended | **1000** (1000–1000) | **990** (900–1100) | — | — |",
		"| 16 clients <one lock> | — | **2000** (1000–3000) | **1000** (500–1500) | **1000** (1000–2000) |",
		"no violations, no errors",
		"| 16 clients, one lock, vs go-zookeeper | >= 1.5x | 1.00x (repeats 1.00–3.00) | **missed** |",
		"Acquire latency p99 in µs",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("markdown lacks %q:\n%s", want, md)
		}
	}
	if strings.Contains(md, "Handoff latency") {
		t.Errorf("markdown has a handoff table without handoff figures:\n%s", md)
	}
}

func TestSVG(t *testing.T) {
	svg := SVG(sampleRun())
	// Well-formed XML, titles escaped, one bar per result, the reference line.
	d := xml.NewDecoder(strings.NewReader(string(svg)))
	rects := 0
	for {
		tok, err := d.Token()
		if err != nil {
			if err.Error() != "EOF" {
				t.Fatalf("SVG is not well-formed XML: %v\n%s", err, svg)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && se.Name.Local == "rect" {
			for _, a := range se.Attr {
				if a.Name.Local == "height" && a.Value == "9" {
					rects++
				}
			}
		}
	}
	if rects != 5 {
		t.Errorf("SVG has %d bars, want 5", rects)
	}
	for _, want := range []string{"16 clients &lt;one lock&gt;", "raw ZooKeeper minimum 1000/s", `stroke-dasharray`} {
		if !strings.Contains(string(svg), want) {
			t.Errorf("SVG lacks %q", want)
		}
	}
}

func TestRateRange(t *testing.T) {
	run := &Run{Results: []Result{{Rate: Figure{Median: 50, Min: 20, Max: 80, N: 1}}, {Rate: Figure{Median: 9000, Min: 8000, Max: 12000, N: 1}}}}
	if lo, hi := rateRange(run); lo != 10 || hi != 100000 {
		t.Errorf("rateRange = %v, %v; want 10, 100000", lo, hi)
	}
}
