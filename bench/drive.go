package main

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock/bench/report"
)

// cycler acquires, calls enter once held and exit just before releasing,
// then releases. The checks between enter and exit span the whole hold.
type cycler func(ctx context.Context, enter, exit func()) error

// worker is one client: cycle takes the lock (or a lease, or a read lock);
// write, for RW scenarios, takes the write lock.
type worker struct {
	cycle, write cycler
}

// trial is one timed measurement.
type trial struct {
	warm, dur time.Duration
	maxOps    int
	minSeq    int // the window opens once this many acquisitions happened
	seed      uint64
}

// opTimeout bounds one acquisition: a waiter behind 1000 others on a loaded
// machine can wait a few seconds, never a minute.
const opTimeout = time.Minute

// drainTimeout bounds how long the clients may take to finish their last
// acquisition once the window has closed: a queue of 1000 drains in seconds.
const drainTimeout = 2 * time.Minute

func waitTimeout(wg *sync.WaitGroup, d time.Duration) bool {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
		return true
	case <-time.After(d):
		return false
	}
}

// monotonic nanoseconds since the start of the program
var epoch = time.Now()

func now() int64 { return int64(time.Since(epoch)) }

// checker verifies exclusion: mutual exclusion per lock, at most limit
// holders of a semaphore, no reader beside a writer.
type checker struct {
	kind       string
	limit      int32
	hold       []atomic.Int32 // per lock: holders (mutex, sem) or writers (RW)
	readers    atomic.Int32
	violations atomic.Int64
}

func (c *checker) enter(lock int, write bool) {
	switch {
	case c.kind == kindSem:
		if c.hold[0].Add(1) > c.limit {
			c.violations.Add(1)
		}
	case c.kind == kindRW && !write:
		c.readers.Add(1)
		if c.hold[0].Load() != 0 {
			c.violations.Add(1)
		}
	default:
		if c.hold[lock].Add(1) != 1 || c.readers.Load() != 0 {
			c.violations.Add(1)
		}
	}
}

func (c *checker) exit(lock int, write bool) {
	if c.kind == kindRW && !write {
		c.readers.Add(-1)
		return
	}
	c.hold[lock].Add(-1)
}

// drive runs ws in a closed loop (each client acquires again as soon as it
// has released) and measures the acquisitions whose release returned in a
// window of t.dur that opens after t.warm.
func drive(ctx context.Context, sc scenario, ws []worker, t trial) (report.Sample, error) {
	chk := &checker{kind: sc.Kind, limit: int32(sc.Limit), hold: make([]atomic.Int32, sc.locks())}
	acq := make([]int64, t.maxOps)  // by acquisition number: when Lock returned
	free := make([]int64, t.maxOps) // when the holder let go: the critical section's end, as Unlock is called
	rel := make([]int64, t.maxOps)  // when Unlock returned
	wait := make([]int64, t.maxOps) // how long Lock took
	var seq atomic.Int64
	var stop atomic.Bool
	var errs atomic.Int64
	var firstErr atomic.Value
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	for i, w := range ws {
		wg.Add(1)
		go func() {
			defer wg.Done()
			rng := rand.New(rand.NewPCG(t.seed, uint64(i)))
			lock := i % sc.locks()
			for range t.maxOps {
				if stop.Load() {
					return
				}
				c, write := w.cycle, false
				if w.write != nil && rng.IntN(100) >= sc.ReadPct {
					c, write = w.write, true
				}
				k := int64(-1)
				opCtx, opCancel := context.WithTimeout(ctx, opTimeout)
				began := now()
				err := c(opCtx, func() {
					k = seq.Add(1) - 1
					if k < int64(t.maxOps) {
						acq[k] = now()
						wait[k] = acq[k] - began
					}
					chk.enter(lock, write)
				}, func() {
					if k >= 0 && k < int64(t.maxOps) {
						free[k] = now()
					}
					chk.exit(lock, write)
				})
				opCancel()
				if err != nil {
					errs.Add(1)
					firstErr.CompareAndSwap(nil, fmt.Errorf("client %d: %w", i, err))
					return
				}
				if k >= int64(t.maxOps) {
					return
				}
				if k >= 0 {
					rel[k] = now()
				}
			}
		}()
	}
	t0, t1 := window(&seq, &stop, &errs, t)
	if !waitTimeout(&wg, drainTimeout) {
		// go-zookeeper's Lock takes no context: a client stuck in it
		// cannot be cancelled, only reported.
		return report.Sample{}, fmt.Errorf("clients still busy %v after the window closed", drainTimeout)
	}
	s := tally(acq, free, rel, wait, min(int(seq.Load()), t.maxOps), t0, t1, sc.Handoff)
	s.Violations, s.Errors = int(chk.violations.Load()), int(errs.Load())
	if err, _ := firstErr.Load().(error); err != nil {
		return s, err
	}
	return s, nil
}

// window waits out the warm-up (and until minSeq acquisitions, bounded by a
// minute), then the measured window, and stops the clients.
func window(seq *atomic.Int64, stop *atomic.Bool, errs *atomic.Int64, t trial) (int64, int64) {
	defer stop.Store(true)
	time.Sleep(t.warm)
	for deadline := time.Now().Add(time.Minute); seq.Load() < int64(t.minSeq) && time.Now().Before(deadline) && errs.Load() == 0; {
		time.Sleep(5 * time.Millisecond)
	}
	t0 := now()
	time.Sleep(t.dur)
	return t0, now()
}

// tally counts the acquisitions released within [t0, t1] (by when their
// Unlock returned), their acquire latencies (p50, p99, longest: from
// calling Lock to its return) and, for a single lock, the handoff latency
// from each holder letting go (free: the end of its critical section, as it
// calls Unlock) to the next Lock returning. Not from Unlock returning: the
// next holder can be told before the releaser has its reply (zklock's
// waiter holds on the data change of the release's multi), which made the
// difference negative (-26.3µs in the 2026-11-25 run). Exclusion orders each
// free before the next acquisition, so the latency is never negative.
func tally(acq, free, rel, wait []int64, n int, t0, t1 int64, handoff bool) report.Sample {
	s := report.Sample{Total: n, HandoffUS: math.NaN(), ReqPerAcq: math.NaN(), CPUUS: math.NaN()}
	var lat, waits []float64
	for k := range n {
		if rel[k] < t0 || rel[k] > t1 || rel[k] == 0 {
			continue
		}
		s.Ops++
		waits = append(waits, float64(wait[k])/1e3)
		if handoff && k+1 < n && acq[k+1] != 0 && free[k] != 0 {
			lat = append(lat, float64(acq[k+1]-free[k])/1e3)
		}
	}
	s.Rate = float64(s.Ops) / (float64(t1-t0) / 1e9)
	s.P50US, s.P99US, s.MaxUS = report.Quantile(waits, 0.5), report.Quantile(waits, 0.99), report.Quantile(waits, 1)
	if handoff {
		s.HandoffUS = report.Median(lat)
	}
	return s
}
