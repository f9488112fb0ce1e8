package chaos_test

import (
	"fmt"
	"os"
	"slices"
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
// CHAOS_BROKEN (see chaos.BrokenFor), CHAOS_VICTIMS (comma-separated zklock
// worker ids that client faults hit in turn), CHAOS_MAX_FAULTS (stop after
// that many), CHAOS_FAULTS (comma-separated kinds,
// default all) and CHAOS_KEEP (workers never killed, default 0; make soak
// keeps 1 so that its growth over the whole run is judged), CHAOS_CURATOR
// and CHAOS_KAZOO (Curator and Kazoo worker processes joining the zklock
// workers, default 1 each, so that the README's test command runs mixed
// clients too), CHAOS_FSYNC (1: servers fsync before acknowledging; make
// soak sets it), CHAOS_POSTGRES (1, the default: the PostgreSQL resource
// written through the fence; 0: ZooKeeper's counters only), CHAOS_STOCK (1: the
// servers refuse 'conf', see chaos.Config.Stock). make chaos and
// make soak set them.
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
		Broken: os.Getenv("CHAOS_BROKEN"), Dir: os.Getenv("CHAOS_DIR"), Fsync: os.Getenv("CHAOS_FSYNC") == "1",
		Postgres: env("CHAOS_POSTGRES", "1") == "1", Stock: os.Getenv("CHAOS_STOCK") == "1"}
	if k := os.Getenv("CHAOS_FAULTS"); k != "" {
		cfg.Kinds = strings.Split(k, ",")
	}
	if n := os.Getenv("CHAOS_MAX_FAULTS"); n != "" {
		if cfg.Faults, err = strconv.Atoi(n); err != nil || cfg.Faults < 0 {
			t.Fatalf("CHAOS_MAX_FAULTS %q: need a count", n)
		}
	}
	if n := os.Getenv("CHAOS_SYNC_LIMIT"); n != "" {
		if cfg.SyncLimit, err = strconv.Atoi(n); err != nil || cfg.SyncLimit < 1 {
			t.Fatalf("CHAOS_SYNC_LIMIT %q: need a count of ticks", n)
		}
	}
	if v := os.Getenv("CHAOS_VICTIMS"); v != "" {
		for _, f := range strings.Split(v, ",") {
			id, err := strconv.Atoi(f)
			if err != nil || id < 1 || id > workers {
				t.Fatalf("CHAOS_VICTIMS %q: need worker ids from 1 to %d", v, workers)
			}
			cfg.Victims = append(cfg.Victims, id)
		}
	}
	return cfg
}

// TestChaos runs every primitive in worker processes under a seeded fault
// schedule and fails on any violation the checker finds.
func TestChaos(t *testing.T) {
	run(t, config(t))
}

// TestChaosLongSyncLimit is a slice whose servers' followers serve
// syncLimit*tickTime = 3s after losing their leader, as long as the suite's
// default session timeout (the sessions follow it: SessionTimeoutFor), with
// the faults that put a client on a follower cut from its leader
// (issue 32): the follower cut, a follower split from the other two, the
// leader isolated. CHAOS_LONGSYNC_DURATION sets its faults' time (30s).
func TestChaosLongSyncLimit(t *testing.T) {
	t.Setenv("CHAOS_DURATION", env("CHAOS_LONGSYNC_DURATION", "30s"))
	t.Setenv("CHAOS_SYNC_LIMIT", "30")
	t.Setenv("CHAOS_FAULTS", strings.Join([]string{chaos.FaultFollowerCut, chaos.FaultPeerSplit, chaos.FaultLeaderIsolated}, ","))
	t.Setenv("CHAOS_CURATOR", "0")
	t.Setenv("CHAOS_KAZOO", "0")
	run(t, config(t))
}

// TestChaosStock is a slice on a stock server configuration: the servers
// refuse 'conf', the clients state the timing, and rolling restarts
// change syncLimit and maxSessionTimeout while holds are live (issue 44),
// among leader kills, follower cuts and client resets.
// CHAOS_STOCK_DURATION sets its faults' time (20s).
func TestChaosStock(t *testing.T) {
	t.Setenv("CHAOS_DURATION", env("CHAOS_STOCK_DURATION", "20s"))
	t.Setenv("CHAOS_STOCK", "1")
	t.Setenv("CHAOS_FAULTS", strings.Join([]string{chaos.FaultConfigRoll, chaos.FaultFollowerCut, chaos.FaultReset, chaos.FaultLeaderKill}, ","))
	t.Setenv("CHAOS_CURATOR", "0")
	t.Setenv("CHAOS_KAZOO", "0")
	t.Setenv("CHAOS_POSTGRES", env("CHAOS_POSTGRES", "0"))
	run(t, config(t))
}

func run(t *testing.T, cfg chaos.Config) {
	t.Logf("seed %d (CHAOS_SEED=%d reproduces the schedule), %v of faults, %d workers, syncLimit %d, postgres %v",
		cfg.Seed, cfg.Seed, cfg.Duration, cfg.Workers, cfg.SyncLimit, cfg.Postgres)
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

// brokenWorkers are TestChaosBrokenIsCaught's deliberately broken zklock
// workers, each with the class of violation it must cause, by name, with
// the worker named where the checker names the culprit. Worker 4 is
// correct: a rival for the others.
var brokenWorkers = []struct {
	id    int
	bugs  string
	class func(v string, w string) bool
	// pg, if set, is a second class the worker must cause, on the
	// PostgreSQL resource.
	pg func(v string, w string) bool
}{
	// Writes without the guard after ignoring the loss: they commit. Its
	// writes to PostgreSQL skip the fence too: one commits after a rival's,
	// with a lower token.
	{1, "noguard,ignorelost,nofence", func(v, w string) bool {
		return strings.Contains(v, "by "+w) && strings.Contains(v, "committed after its holder saw the loss signal")
	}, func(v, w string) bool {
		return strings.Contains(v, "postgres: ") && strings.Contains(v, "stale write committed: "+w)
	}},
	// The guard kept, the loss acted on a session timeout late: only the overlap
	// rule sees it, with this worker the holder that went on believing.
	{2, "latelost", func(v, w string) bool {
		return strings.Contains(v, ": "+w) && strings.Contains(v, "believed they held together")
	}, nil},
	// A deadline logged a session timeout later than the session's: a rival granted
	// before it, though the loss signal came in time.
	{3, "latedeadline", func(v, w string) bool { return strings.Contains(v, "before the ownership deadline "+w) }, nil},
}

// TestChaosBrokenIsCaught shows that the checker can fail, class by class:
// three zklock workers are broken in three ways (brokenWorkers), each is
// cut off past its session timeout in turn, and each must cause its own
// class of violation, by name. Cut-offs rather than freezes: a cut-off
// holder's requests hang, so it holds on until it acts on the loss, where
// a resumed one finds its session gone and releases at once. It stops
// after the three faults (about 20s, bounded by CHAOS_BROKEN_DURATION,
// default 30s; about 30s in all) and runs in the README's test command too,
// so a checker that stopped seeing any of them fails CI.
func TestChaosBrokenIsCaught(t *testing.T) {
	var spec []string
	for _, b := range brokenWorkers {
		spec = append(spec, fmt.Sprintf("%d=%s", b.id, b.bugs))
	}
	t.Setenv("CHAOS_BROKEN", strings.Join(spec, ";"))
	t.Setenv("CHAOS_VICTIMS", "1,2,3")
	t.Setenv("CHAOS_WORKERS", "4")
	// Only zklock workers: the faults must land on the broken workload, not
	// on a Curator or Kazoo worker (which the checker excuses).
	t.Setenv("CHAOS_CURATOR", "0")
	t.Setenv("CHAOS_KAZOO", "0")
	t.Setenv("CHAOS_FAULTS", chaos.FaultPartition)
	t.Setenv("CHAOS_MAX_FAULTS", strconv.Itoa(len(brokenWorkers)))
	t.Setenv("CHAOS_DURATION", env("CHAOS_BROKEN_DURATION", "30s"))
	t.Setenv("CHAOS_POSTGRES", "1")
	// A cut lands where the schedule puts it: a victim may be between
	// holds, or no rival may want its primitive while it still believes,
	// and its class then has nothing to report. A class missed in one run
	// is looked for in a second run with another seed; a checker blind to
	// a class misses it in both. (make test: worker 2's class went
	// unreported once in about ten runs, seed 762152470: one hold of
	// three was cut while running.)
	type class struct {
		worker string
		ok     func(v string) bool
	}
	var classes []class
	for _, b := range brokenWorkers {
		w := fmt.Sprintf("w%d.", b.id)
		classes = append(classes, class{fmt.Sprintf("worker %d (%s): the checker did not report its class of violation", b.id, b.bugs),
			func(v string) bool { return b.class(v, w) }})
		if b.pg != nil {
			classes = append(classes, class{fmt.Sprintf("worker %d (%s): the checker did not report its stale write to PostgreSQL", b.id, b.bugs),
				func(v string) bool { return b.pg(v, w) }})
		}
	}
	for attempt := 0; attempt < brokenAttempts && len(classes) > 0; attempt++ {
		cfg := config(t)
		cfg.Seed += uint64(attempt)
		rep := chaos.Run(t, cfg)
		t.Logf("seed %d, broken workload\n%s", cfg.Seed, rep)
		classes = slices.DeleteFunc(classes, func(c class) bool { return slices.ContainsFunc(rep.Violations, c.ok) })
		for _, c := range classes {
			t.Logf("seed %d: %s", cfg.Seed, c.worker)
		}
	}
	for _, c := range classes {
		t.Errorf("in %d runs: %s", brokenAttempts, c.worker)
	}
}

// brokenAttempts bounds TestChaosBrokenIsCaught's runs.
const brokenAttempts = 2
