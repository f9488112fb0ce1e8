package main

import (
	"context"
	"fmt"
	"log"
	"runtime"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/bench/report"
)

// heldWorkers is how many goroutines take the held locks: enough to keep
// the session's pipeline full.
const heldWorkers = 64

// heldScale holds n locks at once on one zklock session, each on its own
// path, and measures the live heap (after a full collection) and the
// goroutines each costs, its Mutex handle included: the root package's
// BenchmarkHeldScale, in the run that writes the tables. It runs alone in
// this process, after the scenarios have closed their clients.
func heldScale(ctx context.Context, e *servers, n int) (*report.Held, error) {
	log.Printf("held: %d locks on one session", n)
	began := time.Now()
	s, err := zklock.NewSession(ctx, zklock.WithServers(e.zkAddr), zklock.WithSessionTimeout(sessionTimeout))
	if err != nil {
		return nil, err
	}
	defer s.Close()
	heap0, g0 := liveHeap(), runtime.NumGoroutine()
	ms := make([]*zklock.Mutex, n)
	for i := range ms {
		if ms[i], err = zklock.NewMutex(s, fmt.Sprintf("/bench/held/%d", i)); err != nil {
			return nil, err
		}
	}
	if err := eachHeld(ms, func(m *zklock.Mutex) error { return m.Lock(ctx) }); err != nil {
		return nil, err
	}
	heap1, g1 := liveHeap(), runtime.NumGoroutine()
	runtime.KeepAlive(ms)
	h := &report.Held{Locks: n, HeapBytes: float64(heap1-heap0) / float64(n), Goroutines: float64(g1-g0) / float64(n)}
	if err := eachHeld(ms, func(m *zklock.Mutex) error { return m.Unlock(ctx) }); err != nil {
		return nil, err
	}
	log.Printf("held: %.0f B of heap and %.4f goroutines per held lock (%s)", h.HeapBytes, h.Goroutines, time.Since(began).Round(time.Second))
	return h, nil
}

// eachHeld calls f on every mutex from heldWorkers goroutines and returns
// the first error.
func eachHeld(ms []*zklock.Mutex, f func(*zklock.Mutex) error) error {
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, heldWorkers)
	for range heldWorkers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(len(ms)); i = next.Add(1) - 1 {
				if err := f(ms[i]); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	return <-errs
}

// liveHeap is the heap in use after a full collection.
func liveHeap() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
