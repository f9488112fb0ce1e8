package main

import (
	"context"
	"errors"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTally(t *testing.T) {
	// Four acquisitions of one lock; the window [100, 400] holds the
	// releases of #1 and #2 (when their Unlock returned). Handoffs: #1 let
	// go at 140, #2 acquired at 170 (30ns); #2 let go at 290, #3 acquired
	// at 300 (10ns), before #2's Unlock returned at 305.
	acq := []int64{10, 120, 170, 300}
	free := []int64{40, 140, 290, 480}
	rel := []int64{50, 150, 305, 500}
	wait := []int64{5, 1000, 3000, 7}
	s := tally(acq, free, rel, wait, 4, 100, 400, true)
	if s.Ops != 2 || s.Total != 4 {
		t.Errorf("ops %d of %d, want 2 of 4", s.Ops, s.Total)
	}
	if want := 2 / (300e-9); math.Abs(s.Rate-want) > 1 {
		t.Errorf("rate %v, want %v", s.Rate, want)
	}
	if want := 0.020; math.Abs(s.HandoffUS-want) > 1e-9 { // median of 30ns and 10ns, in µs
		t.Errorf("handoff %vµs, want %vµs", s.HandoffUS, want)
	}
	if s.P50US != 1 || s.P99US != 3 || s.MaxUS != 3 { // the waits of #1 and #2, in µs
		t.Errorf("acquire latency p50 %v p99 %v max %v µs, want 1, 3, 3", s.P50US, s.P99US, s.MaxUS)
	}
	if s := tally(acq, free, rel, wait, 4, 100, 400, false); !math.IsNaN(s.HandoffUS) {
		t.Errorf("handoff measured without asking: %v", s.HandoffUS)
	}
}

func TestChecker(t *testing.T) {
	for _, tc := range []struct {
		name  string
		kind  string
		limit int32
		steps func(c *checker)
		want  int64
	}{
		{"mutex alone", kindMutex, 0, func(c *checker) { c.enter(0, false); c.exit(0, false); c.enter(0, false) }, 0},
		{"mutex overlap", kindMutex, 0, func(c *checker) { c.enter(0, false); c.enter(0, false) }, 1},
		{"two locks", kindMutex, 0, func(c *checker) { c.enter(0, false); c.enter(1, false) }, 0},
		{"sem within limit", kindSem, 2, func(c *checker) { c.enter(0, false); c.enter(0, false) }, 0},
		{"sem over limit", kindSem, 2, func(c *checker) { c.enter(0, false); c.enter(0, false); c.enter(0, false) }, 1},
		{"readers share", kindRW, 0, func(c *checker) { c.enter(0, false); c.enter(0, false) }, 0},
		{"writer beside reader", kindRW, 0, func(c *checker) { c.enter(0, false); c.enter(0, true) }, 1},
		{"reader beside writer", kindRW, 0, func(c *checker) { c.enter(0, true); c.enter(0, false) }, 1},
		{"writers in turn", kindRW, 0, func(c *checker) { c.enter(0, true); c.exit(0, true); c.enter(0, true) }, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := &checker{kind: tc.kind, limit: tc.limit, hold: make([]atomic.Int32, 2)}
			tc.steps(c)
			if got := c.violations.Load(); got != tc.want {
				t.Errorf("violations = %d, want %d", got, tc.want)
			}
		})
	}
}

// TestDrive runs the closed loop over an in-process lock: it must count
// acquisitions in the window, see no violation, and catch a broken lock.
func TestDrive(t *testing.T) {
	var mu sync.Mutex
	good := func(ctx context.Context, enter, exit func()) error {
		mu.Lock()
		enter()
		time.Sleep(50 * time.Microsecond)
		exit()
		mu.Unlock()
		return nil
	}
	broken := func(ctx context.Context, enter, exit func()) error {
		enter()
		time.Sleep(time.Millisecond)
		exit()
		return nil
	}
	sc := scenario{Kind: kindMutex, Clients: 4, Handoff: true}
	tr := trial{warm: 10 * time.Millisecond, dur: 100 * time.Millisecond, maxOps: 1 << 16, seed: 1}
	s, err := drive(context.Background(), sc, []worker{{cycle: good}, {cycle: good}, {cycle: good}, {cycle: good}}, tr)
	if err != nil || s.Violations != 0 || s.Ops == 0 || s.Rate <= 0 || math.IsNaN(s.HandoffUS) {
		t.Errorf("good lock: %+v, %v", s, err)
	}
	s, err = drive(context.Background(), sc, []worker{{cycle: broken}, {cycle: broken}, {cycle: broken}, {cycle: broken}}, tr)
	if err != nil || s.Violations == 0 {
		t.Errorf("broken lock: %+v, %v; want violations", s, err)
	}
	failing := func(context.Context, func(), func()) error { return errors.New("boom") }
	if _, err := drive(context.Background(), sc, []worker{{cycle: failing}}, tr); err == nil {
		t.Error("a failing client was not reported")
	}
}

// TestHandoffNotNegative: a lock whose next holder is told before the
// releaser's Unlock returns (zklock's: the waiter holds on the data change
// of the release's multi, which the server sends it with, or before, the
// multi's reply) must not give a negative handoff latency. Here each
// release returns only once the next holder has entered (bounded: a second,
// for the last one).
func TestHandoffNotNegative(t *testing.T) {
	var mu sync.Mutex
	var entered atomic.Int64
	cycle := func(ctx context.Context, enter, exit func()) error {
		mu.Lock()
		enter()
		mine := entered.Add(1)
		exit()
		mu.Unlock()
		for deadline := time.Now().Add(time.Second); entered.Load() == mine && time.Now().Before(deadline); {
			runtime.Gosched()
		}
		return nil
	}
	sc := scenario{Kind: kindMutex, Clients: 2, Handoff: true}
	tr := trial{warm: 10 * time.Millisecond, dur: 100 * time.Millisecond, maxOps: 1 << 16, seed: 1}
	s, err := drive(context.Background(), sc, []worker{{cycle: cycle}, {cycle: cycle}}, tr)
	if err != nil || s.Violations != 0 || s.Ops == 0 {
		t.Fatalf("%+v, %v", s, err)
	}
	if math.IsNaN(s.HandoffUS) || s.HandoffUS < 0 {
		t.Errorf("handoff latency %vµs over %d acquisitions; want a latency >= 0", s.HandoffUS, s.Ops)
	}
}
