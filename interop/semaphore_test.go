package interop_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zklock/zklock"
)

// TestCuratorSemaphore: zklock Semaphore and Curator InterProcessSemaphoreV2
// with the same limit on one path never hold more leases than the limit.
func TestCuratorSemaphore(t *testing.T) {
	const limit = 2
	w := newWorld(t, needCurator)
	lim := fmt.Sprintf("limit=%d", limit)
	procs := []*proc{
		startCurator(t, w.args("java-1", "sem", cycles, holdMS, lim)),
		startCurator(t, w.args("java-2", "sem", cycles, holdMS, lim)),
	}
	var gos []goParty
	for i := 1; i <= 3; i++ {
		s, err := zklock.NewSemaphore(w.session(), w.path, limit)
		if err != nil {
			t.Fatal(err)
		}
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
