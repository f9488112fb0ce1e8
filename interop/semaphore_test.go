package interop_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/zklock/zklock"
)

// TestCuratorSemaphore: zklock Semaphore and Curator InterProcessSemaphoreV2
// with the same limit on one path never hold more leases than the limit.
func TestCuratorSemaphore(t *testing.T) {
	t.Parallel()
	t.Run("contend", testCuratorSemaphoreContend)
	t.Run("full", testCuratorSemaphoreFull)
}

func testCuratorSemaphoreContend(t *testing.T) {
	const limit = 2
	w := newWorld(t, needCurator)
	lim := fmt.Sprintf("limit=%d", limit)
	procs := []*proc{
		startCurator(t, w.args("java-1", "sem", cycles, holdMS, lim)),
		startCurator(t, w.args("java-2", "sem", cycles, holdMS, lim)),
	}
	var gos []goParty
	for i := 1; i <= 3; i++ {
		s := w.semaphore(limit)
		gos = append(gos, goParty{fmt.Sprintf("go-%d", i), "sem", func(ctx context.Context) (func(context.Context) error, error) {
			l, err := s.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}})
	}
	w.contend(gos, procs, cycles, hold)
	rep := verify(t, w.log, atMost(limit), wants(cycles, "go-1", "go-2", "go-3", "java-1", "java-2"))
	t.Logf("grant order: %v; most leases at once: %d", rep.order, rep.maxActive["sem"])
}

// testCuratorSemaphoreFull: leases of either library count against the
// limit for the other, and a queued Curator client gets the lease a zklock
// client gives back.
func testCuratorSemaphoreFull(t *testing.T) {
	const limit = 2
	w := newWorld(t, needCurator)
	j := startCurator(t, w.args("java", "interactive", 0, "", fmt.Sprintf("limit=%d", limit)))
	j.expect(t, "ready")
	j.send(t, "go")
	s1, s2 := w.semaphore(limit), w.semaphore(limit)

	j.do(t, "acquire sem 60000", "held sem")
	l1, err := s1.Acquire(w.ctx, 1)
	w.step("go-1", "start", "sem", err)
	if _, err := s2.TryAcquire(w.ctx, 1); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("zklock TryAcquire beside a Curator and a zklock lease: %v, want ErrLocked", err)
	}
	j.do(t, "release sem", "released sem")
	l2, err := s2.TryAcquire(w.ctx, 1)
	w.step("go-2", "start", "sem", err)
	j.do(t, "acquire sem 300", "busy sem")

	j.send(t, "acquire sem 60000")
	w.waitQueue(true, 1) // Curator waits, holding the semaphore's mutex
	w.step("go-1", "end", "sem", nil)
	if err := l1.Release(w.ctx); err != nil {
		t.Fatal(err)
	}
	j.expect(t, "held sem")
	w.step("go-2", "end", "sem", nil)
	if err := l2.Release(w.ctx); err != nil {
		t.Fatal(err)
	}
	j.do(t, "release sem", "released sem")
	j.end(t)
	verify(t, w.log, atMost(limit), map[string]int{"java": 2, "go-1": 1, "go-2": 1})
}

func (w *world) semaphore(limit int) *zklock.Semaphore {
	s, err := zklock.NewSemaphore(w.session(), w.path, limit)
	if err != nil {
		w.t.Fatal(err)
	}
	return s
}
