package interop_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/zklock/zklock"
)

// TestCuratorElection: zklock Election candidates and Curator
// LeaderSelectors on one path elect one leader at a time, and each leads.
func TestCuratorElection(t *testing.T) {
	t.Parallel()
	w := newWorld(t, needCurator)
	procs := []*proc{
		startCurator(t, w.args("java-1", "leader", cycles, holdMS)),
		startCurator(t, w.args("java-2", "leader", cycles, holdMS)),
	}
	var gos []goParty
	for i := 1; i <= 2; i++ {
		id := fmt.Sprintf("go-%d", i)
		e, err := zklock.NewElection(w.session(), w.path)
		if err != nil {
			t.Fatal(err)
		}
		gos = append(gos, goParty{id, "leader", func(ctx context.Context) (func(context.Context) error, error) {
			if _, err := e.Campaign(ctx, []byte(id)); err != nil {
				return nil, err
			}
			return e.Resign, nil
		}})
	}
	w.contend(gos, procs, cycles, hold)
	rep := verify(t, w.log, exclusive, wants(cycles, "go-1", "go-2", "java-1", "java-2"))
	t.Logf("leaders in turn: %v", rep.order)
}
