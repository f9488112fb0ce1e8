package zklock_test

import (
	"context"
	"math/rand/v2"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// benchServer starts a server granting minute-long sessions, so pings
// barely count in the requests per cycle.
func benchServer(b *testing.B) *zktest.Cluster {
	b.Helper()
	return zktest.Start(b, zktest.WithSessionTimeouts(200*time.Millisecond, time.Minute))
}

func benchSessions(b *testing.B, c *zktest.Cluster, n int) []*zklock.Session {
	b.Helper()
	out := make([]*zklock.Session, n)
	for i := range out {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...), zklock.WithSessionTimeout(time.Minute))
		cancel()
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { s.Close() })
		out[i] = s
	}
	return out
}

// measure runs cycle b.N times spread over clients goroutines (client i
// runs cycle(i)) and reports cycles/s, server requests per cycle and
// goroutines started per cycle (by the whole process: zklock, its client
// and the benchmark's own, which start none per cycle).
func measure(b *testing.B, c *zktest.Cluster, clients int, cycle func(ctx context.Context, client int) error) {
	b.Helper()
	ctx := context.Background()
	for i := range clients { // warm up: parents exist, limits verified
		if err := cycle(ctx, i); err != nil {
			b.Fatal(err)
		}
	}
	p0 := packets(b, c)
	g0 := goroutinesCreated()
	cpu0 := cpuTime(b)
	var left atomic.Int64
	left.Store(int64(b.N))
	var failed atomic.Value
	var wg sync.WaitGroup
	b.ResetTimer()
	start := time.Now()
	for i := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for left.Add(-1) >= 0 {
				if err := cycle(ctx, i); err != nil {
					failed.Store(err)
					return
				}
			}
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	b.StopTimer()
	gs := goroutinesCreated() - g0
	cpu := cpuTime(b) - cpu0
	if err := failed.Load(); err != nil {
		b.Fatal(err)
	}
	reqs := packets(b, c) - p0
	b.ReportMetric(float64(b.N)/elapsed.Seconds(), "cycles/s")
	b.ReportMetric(float64(reqs)/float64(b.N), "req/cycle")
	b.ReportMetric(float64(gs)/float64(b.N), "goroutines/cycle")
	b.ReportMetric(float64(cpu.Microseconds())/float64(b.N), "cpu-µs/cycle")
}

// cpuTime is the CPU time (user and system) the process has used: the
// clients' cost, since the server is another process.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// goroutinesCreated is the number of goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// BenchmarkSemaphore: one client alone (the fast path), and 16 clients
// competing for 4 leases or for 1, and 8 for 2 (make bench's row), in both
// layouts.
func BenchmarkSemaphore(b *testing.B) {
	c := benchServer(b)
	for _, bc := range []struct {
		name           string
		clients, limit int
		opts           []zklock.Option
	}{
		{"uncontended", 1, 1, nil}, {"clients=16/limit=4", 16, 4, nil}, {"clients=16/limit=1", 16, 1, nil},
		{"clients=8/limit=2", 8, 2, nil},
		{"queue/uncontended", 1, 1, []zklock.Option{zklock.WithPermitLayout()}},
		{"queue/clients=16/limit=4", 16, 4, []zklock.Option{zklock.WithPermitLayout()}},
		{"queue/clients=8/limit=2", 8, 2, []zklock.Option{zklock.WithPermitLayout()}},
	} {
		b.Run(bc.name, func(b *testing.B) {
			path := "/bench/" + b.Name()
			var sems []*zklock.Semaphore
			for _, s := range benchSessions(b, c, bc.clients) {
				sem, err := zklock.NewSemaphore(s, path, bc.limit, bc.opts...)
				if err != nil {
					b.Fatal(err)
				}
				sems = append(sems, sem)
			}
			measure(b, c, bc.clients, func(ctx context.Context, i int) error {
				l, err := sems[i].Acquire(ctx, 1)
				if err != nil {
					return err
				}
				return l.Release(ctx)
			})
		})
	}
}

// BenchmarkRWMutexReadMostly: 16 clients, 90% of cycles read, 10% write.
func BenchmarkRWMutexReadMostly(b *testing.B) {
	const clients = 16
	c := benchServer(b)
	var ms []*zklock.RWMutex
	for _, s := range benchSessions(b, c, clients) {
		m, err := zklock.NewRWMutex(s, "/bench/rw-mostly")
		if err != nil {
			b.Fatal(err)
		}
		ms = append(ms, m)
	}
	rngs := make([]*rand.Rand, clients)
	for i := range rngs {
		rngs[i] = rand.New(rand.NewPCG(uint64(i), 9))
	}
	measure(b, c, clients, func(ctx context.Context, i int) error {
		m := ms[i]
		lock, unlock := m.RLock, m.RUnlock
		if rngs[i].IntN(10) == 0 {
			lock, unlock = m.Lock, m.Unlock
		}
		if err := lock(ctx); err != nil {
			return err
		}
		return unlock(ctx)
	})
}

// BenchmarkWriteLockVsMutex: an uncontended RWMutex write cycle beside a
// Mutex cycle, in one run on one server.
func BenchmarkWriteLockVsMutex(b *testing.B) {
	c := benchServer(b)
	s := benchSessions(b, c, 1)[0]
	b.Run("mutex", func(b *testing.B) {
		m, err := zklock.NewMutex(s, "/bench/mutex")
		if err != nil {
			b.Fatal(err)
		}
		measure(b, c, 1, func(ctx context.Context, _ int) error {
			if err := m.Lock(ctx); err != nil {
				return err
			}
			return m.Unlock(ctx)
		})
	})
	// Alternating the two cycles in one loop cancels load drift on a shared
	// machine: the ratio is write cycle time over Mutex cycle time.
	b.Run("interleaved", func(b *testing.B) {
		m, err1 := zklock.NewMutex(s, "/bench/mutex-i")
		rw, err2 := zklock.NewRWMutex(s, "/bench/rwmutex-i")
		if err1 != nil || err2 != nil {
			b.Fatal(err1, err2)
		}
		ctx := context.Background()
		var tm, trw time.Duration
		for b.Loop() {
			t0 := time.Now()
			if err := lockCycle(ctx, m.Lock, m.Unlock); err != nil {
				b.Fatal(err)
			}
			t1 := time.Now()
			if err := lockCycle(ctx, rw.Lock, rw.Unlock); err != nil {
				b.Fatal(err)
			}
			tm, trw = tm+t1.Sub(t0), trw+time.Since(t1)
		}
		b.ReportMetric(float64(trw)/float64(tm), "write/mutex")
	})
	b.Run("rwmutex-write", func(b *testing.B) {
		m, err := zklock.NewRWMutex(s, "/bench/rwmutex")
		if err != nil {
			b.Fatal(err)
		}
		measure(b, c, 1, func(ctx context.Context, _ int) error {
			if err := m.Lock(ctx); err != nil {
				return err
			}
			return m.Unlock(ctx)
		})
	})
}

func lockCycle(ctx context.Context, lock, unlock func(context.Context) error) error {
	if err := lock(ctx); err != nil {
		return err
	}
	return unlock(ctx)
}
