package zklock_test

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/zklock/zklock"
)

// BenchmarkHeldScale holds b.N locks at once on one session, each on its
// own path, and reports the heap (after a GC) and goroutines each held lock
// costs, its Mutex handle included: what a service holding many locks
// pays. Run it with
// -benchtime=100000x for the 100,000-lock figure. With HELD_HEAP_PROFILE
// set to a file (and -memprofilerate=1) it writes there a heap profile
// taken while the locks are held: go tool pprof -sample_index=inuse_space
// shows what each held lock costs, by allocation site.
func BenchmarkHeldScale(b *testing.B) {
	c := benchServer(b)
	s := benchSessions(b, c, 1)[0]
	ctx := context.Background()
	heap0, g0 := heapNow(), runtime.NumGoroutine() // the handles count too
	ms := make([]*zklock.Mutex, b.N)
	for i := range ms {
		m, err := zklock.NewMutex(s, fmt.Sprintf("/bench/scale/%d", i))
		if err != nil {
			b.Fatal(err)
		}
		ms[i] = m
	}
	b.ResetTimer()
	var next atomic.Int64
	var wg sync.WaitGroup
	errs := make(chan error, 64)
	for range 64 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := next.Add(1) - 1; i < int64(b.N); i = next.Add(1) - 1 {
				if err := ms[i].Lock(ctx); err != nil {
					errs <- err
					return
				}
			}
		}()
	}
	wg.Wait()
	b.StopTimer()
	close(errs)
	if err := <-errs; err != nil {
		b.Fatal(err)
	}
	heap1, g1 := heapNow(), runtime.NumGoroutine()
	b.ReportMetric(float64(heap1-heap0)/float64(b.N), "heap-B/held")
	b.ReportMetric(float64(g1-g0)/float64(b.N), "goroutines/held")
	if p := os.Getenv("HELD_HEAP_PROFILE"); p != "" {
		writeHeapProfile(b, p)
	}
	for _, m := range ms {
		if err := m.Unlock(ctx); err != nil {
			b.Fatal(err)
		}
	}
}

// writeHeapProfile writes the live heap's profile to file.
func writeHeapProfile(b *testing.B, file string) {
	f, err := os.Create(file)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		b.Fatal(err)
	}
}

// heapNow returns the live heap after a full collection.
func heapNow() int64 {
	runtime.GC()
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	return int64(ms.HeapAlloc)
}
