package chaos_test

import (
	"bytes"
	"encoding/json"
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zklock/zklock/chaos"
)

var update = flag.Bool("update", false, "rewrite testdata/golden from the builders")

// goldens are the synthetic histories of issue 33 (testdata/golden/NAME.json):
// each encodes a failure the checker before it passed, and want lists what
// the report must say. The controls (want empty) are real-looking runs
// every checker must pass. go run ./recheck FILE (in chaos/) checks one by
// hand; go test -run TestGolden -update . rewrites them from the builders.
var goldens = []struct {
	name  string
	build func() *chaos.Outcome
	want  []string
}{
	{"frozen-rival-early", goldenFrozenRivalEarly, []string{"believed they held together", "100ms into w1.1's freeze"}},
	{"frozen-long-belief", goldenFrozenLongBelief, []string{"believed they held together", "2.8s after it was resumed"}},
	{"fenced-by-commit-order", goldenFencedByCommitOrder, []string{"fencing failed: 1 write(s) of paused w1.1"}},
	{"frozen-before-deadline", goldenFrozenBeforeDeadline, []string{"w2.1 w token 20 acquired 100ms before the ownership deadline w1.1 w token 10 had logged"}},
	{"frozen-legit", goldenFrozenLegit, nil},
	{"stale-no-loss", goldenStaleNoLoss, []string{"believed they held together", "its loss signal never fired"}},
	{"peer-partition-node-live", goldenPeerPartitionNodeLive, []string{"believed they held together", "deleted 1.99s after the rival acquired"}},
	{"peer-legit", goldenPeerLegit, nil},
	{"semaphore-frozen-early", goldenSemaphoreFrozenEarly, []string{"3 leases believed held at once by 3 holders (limit 2) when w3.1"}},
	{"semaphore-peer-partition", goldenSemaphorePeerPartition, []string{"3 leases believed held at once by 3 holders (limit 2) when w3.1"}},
	{"semaphore-late-loss-blamed-on-curator", goldenSemaphoreLateLossBlamedOnCurator, []string{"3 leases believed held at once by 3 holders (limit 2) when c1.1"}},
	{"peer-neighbour-lost-increment", goldenPeerNeighbourLostIncrement, []string{"value 2 written by w1.1 token 10 after the counter reached 2 (by c1.1 token 0): 1 increment(s) lost",
		"write 2 by w1.1 (token 10) committed after a later hold began"}},
	{"late-commit", goldenLateCommit, []string{"write 2 by w1.1 (token 10) committed after a later hold began: w2.1 w token 20 acquired 100ms after"}},
	{"unmatched-acquire", goldenUnmatchedAcquire, []string{"w1.1 acquired mutex again at", "believed they held together"}},
	{"fault-error", goldenFaultError, []string{"fault client-pause on w1.1 failed: os: process already finished"}},
	{"follower-cut", goldenFollowerCut, []string{"believed they held together for 750ms", "acquired 700ms before the ownership deadline w1.1 w token 10 had logged"}},
}

func goldenPath(name string) string { return filepath.Join("testdata", "golden", name+".json") }

// TestGolden runs the checker on each golden history, read from its file,
// and requires each of its wants among the violations (none for a control).
func TestGolden(t *testing.T) {
	for _, g := range goldens {
		t.Run(g.name, func(t *testing.T) {
			built, err := json.MarshalIndent(g.build(), "", " ")
			if err != nil {
				t.Fatal(err)
			}
			built = append(built, '\n')
			if *update {
				if err := os.WriteFile(goldenPath(g.name), built, 0o644); err != nil {
					t.Fatal(err)
				}
			}
			if file, err := os.ReadFile(goldenPath(g.name)); err != nil || !bytes.Equal(file, built) {
				t.Fatalf("%s differs from its builder (go test -run TestGolden -update rewrites it): %v", goldenPath(g.name), err)
			}
			o, err := chaos.LoadOutcome(goldenPath(g.name))
			if err != nil {
				t.Fatal(err)
			}
			rep := chaos.Check(o)
			if len(g.want) == 0 && !rep.OK() {
				t.Fatalf("a control history has violations:\n%s", rep)
			}
			for _, want := range g.want {
				if !hasViolation(rep, want) {
					t.Errorf("no violation containing %q:\n%s", want, rep)
				}
			}
		})
	}
}

func hasViolation(rep *chaos.Report, want string) bool {
	for _, v := range rep.Violations {
		if strings.Contains(v, want) {
			return true
		}
	}
	return false
}
