package chaos_test

import (
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/chaos"
	"go.uber.org/goleak"
)

// TestMain hands worker processes (this test binary re-run by the
// coordinator) to chaos.MainWorker.
func TestMain(m *testing.M) {
	if chaos.IsWorker() {
		os.Exit(chaos.MainWorker())
	}
	goleak.VerifyTestMain(m)
}

// env returns the environment variable name, or def when unset.
func env(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// config reads a run's configuration from CHAOS_DURATION (default 45s of
// faults, about a minute in all), CHAOS_SEED (default: the clock),
// CHAOS_WORKERS (4), CHAOS_LIMIT (2), CHAOS_DIR (a temporary directory) and
// CHAOS_BROKEN (see chaos.Broken), CHAOS_FAULTS (comma-separated kinds,
// default all) and CHAOS_KEEP (workers never killed, default 0; make soak
// keeps 1 so that its growth over the whole run is judged), CHAOS_CURATOR
// and CHAOS_KAZOO (Curator and Kazoo worker processes joining the zklock
// workers, default 1 each, so that the README's test command runs mixed
// clients too), CHAOS_FSYNC (1: servers fsync before acknowledging; make
// soak sets it). make chaos and make soak set them.
func config(t *testing.T) chaos.Config {
	d, err := time.ParseDuration(env("CHAOS_DURATION", "45s"))
	if err != nil {
		t.Fatalf("CHAOS_DURATION: %v", err)
	}
	seed, err := strconv.ParseUint(env("CHAOS_SEED", strconv.FormatInt(time.Now().UnixNano()%1e9, 10)), 10, 64)
	if err != nil {
		t.Fatalf("CHAOS_SEED: %v", err)
	}
	workers, err1 := strconv.Atoi(env("CHAOS_WORKERS", "4"))
	limit, err2 := strconv.Atoi(env("CHAOS_LIMIT", "2"))
	keep, err3 := strconv.Atoi(env("CHAOS_KEEP", "0"))
	curator, err4 := strconv.Atoi(env("CHAOS_CURATOR", "1"))
	kazoo, err5 := strconv.Atoi(env("CHAOS_KAZOO", "1"))
	if err4 != nil || err5 != nil || curator < 0 || curator > 4 || kazoo < 0 || kazoo > 4 {
		t.Fatalf("CHAOS_CURATOR %q, CHAOS_KAZOO %q: need 0 to 4 workers of each", os.Getenv("CHAOS_CURATOR"), os.Getenv("CHAOS_KAZOO"))
	}
	if err1 != nil || err2 != nil || err3 != nil || workers < 2 || workers > 16 || limit < 1 || limit >= workers || keep < 0 || keep >= workers {
		t.Fatalf("CHAOS_WORKERS %d, CHAOS_LIMIT %d, CHAOS_KEEP %d: need 2 <= workers <= 16, 1 <= limit < workers and 0 <= keep < workers",
			workers, limit, keep)
	}
	cfg := chaos.Config{Duration: d, Seed: seed, Workers: workers, Limit: limit, Keep: keep, Curator: curator, Kazoo: kazoo,
		Broken: os.Getenv("CHAOS_BROKEN"), Dir: os.Getenv("CHAOS_DIR"), Fsync: os.Getenv("CHAOS_FSYNC") == "1"}
	if k := os.Getenv("CHAOS_FAULTS"); k != "" {
		cfg.Kinds = strings.Split(k, ",")
	}
	return cfg
}

// TestChaos runs every primitive in worker processes under a seeded fault
// schedule and fails on any violation the checker finds.
func TestChaos(t *testing.T) {
	cfg := config(t)
	t.Logf("seed %d (CHAOS_SEED=%d reproduces the schedule), %v of faults, %d workers", cfg.Seed, cfg.Seed, cfg.Duration, cfg.Workers)
	rep := chaos.Run(t, cfg)
	t.Logf("seed %d\n%s", cfg.Seed, rep)
	if !rep.OK() {
		t.Errorf("seed %d: %d violation(s)", cfg.Seed, len(rep.Violations))
	}
	if len(rep.ServerLost) > 0 {
		t.Errorf("seed %d: the servers lost committed transactions (%d receipt numbers given twice): the run proves nothing about the locks after that",
			cfg.Seed, len(rep.ServerLost))
	}
}

// TestChaosBrokenIsCaught shows that the checker can fail: the workers
// write without the guard and ignore the loss signal, faults freeze and cut
// off lock holders, and the checker must report violations. It runs
// CHAOS_BROKEN_DURATION of faults (default 20s, about 35s in all) in the
// README's test command too, so a checker that stopped seeing violations
// fails CI.
func TestChaosBrokenIsCaught(t *testing.T) {
	t.Setenv("CHAOS_BROKEN", "noguard,ignorelost")
	// Only zklock workers: the faults must land on the broken workload, not
	// on a Curator or Kazoo worker (which the checker excuses).
	t.Setenv("CHAOS_CURATOR", "0")
	t.Setenv("CHAOS_KAZOO", "0")
	t.Setenv("CHAOS_FAULTS", chaos.FaultPause+","+chaos.FaultPartition)
	t.Setenv("CHAOS_DURATION", env("CHAOS_BROKEN_DURATION", "20s"))
	cfg := config(t)
	rep := chaos.Run(t, cfg)
	t.Logf("seed %d, broken workload\n%s", cfg.Seed, rep)
	if rep.OK() {
		t.Fatalf("seed %d: the checker found nothing wrong with a workload that ignores its loss signal and guard", cfg.Seed)
	}
	if len(rep.Violations) == 0 {
		t.Fatalf("seed %d: a failed report lists no violation", cfg.Seed)
	}
}
