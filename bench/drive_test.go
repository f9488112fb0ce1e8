package main

import (
	"context"
	"errors"
	"math"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

func TestTally(t *testing.T) {
	// Four acquisitions of one lock; the window [100, 400] holds the
	// releases of #1 and #2. Handoffs: #1 released at 150, #2 acquired at
	// 170 (20ns); #2 released at 300, #3 acquired at 310 (10ns).
	acq := []int64{10, 120, 170, 310}
	rel := []int64{50, 150, 300, 500}
	wait := []int64{5, 1000, 3000, 7}
	s := tally(acq, rel, wait, 4, 100, 400, true)
	if s.Ops != 2 || s.Total != 4 {
		t.Errorf("ops %d of %d, want 2 of 4", s.Ops, s.Total)
	}
	if want := 2 / (300e-9); math.Abs(s.Rate-want) > 1 {
		t.Errorf("rate %v, want %v", s.Rate, want)
	}
	if want := 0.015; math.Abs(s.HandoffUS-want) > 1e-9 { // median of 20ns and 10ns, in µs
		t.Errorf("handoff %vµs, want %vµs", s.HandoffUS, want)
	}
	if s.P50US != 1 || s.P99US != 3 || s.MaxUS != 3 { // the waits of #1 and #2, in µs
		t.Errorf("acquire latency p50 %v p99 %v max %v µs, want 1, 3, 3", s.P50US, s.P99US, s.MaxUS)
	}
	if s := tally(acq, rel, wait, 4, 100, 400, false); !math.IsNaN(s.HandoffUS) {
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
