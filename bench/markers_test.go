package main

import (
	"errors"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/bench/report"
)

// replaceMarked keeps both markers and everything outside them, and
// refuses a file whose markers are missing, doubled or out of order.
func TestReplaceMarked(t *testing.T) {
	const b, e = "<!-- b -->", "<!-- e -->"
	got, err := replaceMarked([]byte("head\n"+b+"\nold\n"+e+"\ntail\n"), b, e, "\nnew\n")
	if err != nil {
		t.Fatal(err)
	}
	if want := "head\n" + b + "\nnew\n" + e + "\ntail\n"; string(got) != want {
		t.Fatalf("got %q, want %q", got, want)
	}
	for _, bad := range []string{"no markers", b + " only", e + " then " + b, b + b + e, b + e + e} {
		if _, err := replaceMarked([]byte(bad), b, e, "x"); !errors.Is(err, errNoMarkers) {
			t.Errorf("%q: err %v, want errNoMarkers", bad, err)
		}
	}
}

// updateCosts writes the run's figures between the README's markers and
// leaves the rest of the file as it was; run twice, it gives the same file.
func TestUpdateCosts(t *testing.T) {
	path := filepath.Join(t.TempDir(), "README.md")
	before, after := "# x\n\n## What it costs\n\n", "\n## Next\ntext\n"
	if err := os.WriteFile(path, []byte(before+costsBegin+"\nstale 616 B\n"+costsEnd+after), 0o644); err != nil {
		t.Fatal(err)
	}
	nan := func(s report.Sample) report.Sample {
		n := math.NaN()
		s.HandoffUS, s.P50US, s.P99US, s.MaxUS = n, n, n, n
		return s
	}
	run := &report.Run{Date: time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC), Mode: "full", Machine: "2 cores",
		Versions: []string{"ZooKeeper 3.8.0"}, Held: &report.Held{Locks: 100000, HeapBytes: 512.4},
		Results: []report.Result{
			report.NewResult("uncontended", "zklock", []report.Sample{nan(report.Sample{Rate: 1, ReqPerAcq: 3, CPUUS: 80})}),
			report.NewResult("c16", "zklock", []report.Sample{nan(report.Sample{Rate: 1, ReqPerAcq: 4, CPUUS: 90})}),
			report.NewResult("c16", "go-zookeeper", []report.Sample{nan(report.Sample{Rate: 1, ReqPerAcq: 5, CPUUS: 100})}),
		}}
	for range 2 {
		if err := updateCosts(path, "Load 1.0.", run); err != nil {
			t.Fatal(err)
		}
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	if !strings.HasPrefix(s, before+costsBegin+"\n") || !strings.HasSuffix(s, costsEnd+after) {
		t.Fatalf("outside the markers changed:\n%s", s)
	}
	for _, want := range []string{"2026-11-26 12:00 UTC", "Load 1.0.", "**3.00 uncontended**", "**4.00 at 16 clients**",
		"against 5.00 for go-zookeeper's", "**512 B** of heap", "100000 locks held", "80.0 µs uncontended", "Curator's lock at 16 clients"} {
		if !strings.Contains(s, want) {
			t.Errorf("costs lack %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "616") || strings.Count(s, costsBegin) != 1 {
		t.Errorf("stale text kept or block doubled:\n%s", s)
	}
}
