package chaos

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock"
)

// Environment of a worker process: the coordinator re-executes its own
// binary with these set.
const (
	EnvProc   = "ZKLOCK_CHAOS_PROC"   // worker and incarnation, "w2.1"; set only in workers
	EnvAddrs  = "ZKLOCK_CHAOS_ADDRS"  // the worker's proxy addresses, comma-separated
	EnvLog    = "ZKLOCK_CHAOS_LOG"    // the worker's log file
	EnvRoot   = "ZKLOCK_CHAOS_ROOT"   // the run's root path in ZooKeeper
	EnvSeed   = "ZKLOCK_CHAOS_SEED"   // the worker's random seed
	EnvLimit  = "ZKLOCK_CHAOS_LIMIT"  // the semaphore's limit
	EnvBroken = "ZKLOCK_CHAOS_BROKEN" // deliberate bugs, see Broken
)

// SessionTimeout is what workers ask for; the servers grant at most their
// maxSessionTimeout (6s for a zktest ensemble's defaults). Through a
// follower a session must outlast syncLimit*tickTime (1.5s here) plus a
// tick and a half and the margin, more than 2s: zklock refuses 2s.
const SessionTimeout = 3 * time.Second

// Broken selects deliberate bugs in the workload, to show the checker
// catches them: "noguard" writes without the hold's guard, "ignorelost"
// keeps believing (and writing) after the loss signal; comma-separated.
type Broken struct{ NoGuard, IgnoreLost bool }

// ParseBroken parses EnvBroken's value.
func ParseBroken(s string) (Broken, error) {
	var b Broken
	for _, f := range strings.Split(s, ",") {
		switch strings.TrimSpace(f) {
		case "":
		case "noguard":
			b.NoGuard = true
		case "ignorelost":
			b.IgnoreLost = true
		default:
			return b, fmt.Errorf("chaos: %s: unknown bug %q", EnvBroken, f)
		}
	}
	return b, nil
}

// WorkerConfig is a worker process's configuration.
type WorkerConfig struct {
	Proc    string
	Addrs   []string
	LogPath string
	Paths   Paths
	Seed    uint64
	Limit   int
	Broken  Broken
}

// IsWorker reports whether this process was started as a worker.
func IsWorker() bool { return os.Getenv(EnvProc) != "" }

// WorkerFromEnv reads a worker's configuration from its environment.
func WorkerFromEnv() (WorkerConfig, error) {
	seed, err1 := strconv.ParseUint(os.Getenv(EnvSeed), 10, 64)
	limit, err2 := strconv.Atoi(os.Getenv(EnvLimit))
	broken, err3 := ParseBroken(os.Getenv(EnvBroken))
	cfg := WorkerConfig{
		Proc: os.Getenv(EnvProc), Addrs: strings.Split(os.Getenv(EnvAddrs), ","),
		LogPath: os.Getenv(EnvLog), Paths: Paths{Root: os.Getenv(EnvRoot)},
		Seed: seed, Limit: limit, Broken: broken,
	}
	return cfg, errors.Join(err1, err2, err3)
}

// RunWorker runs every primitive's workload over one session until stop is
// closed (the coordinator closes the worker's stdin), then releases, closes
// the session and returns.
func RunWorker(cfg WorkerConfig, stop io.Reader, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	go func() { _, _ = io.Copy(io.Discard, stop); cancel() }()
	log, err := CreateLog(cfg.LogPath)
	if err != nil {
		return err
	}
	defer log.Close()
	s, err := zklock.NewSession(ctx, zklock.WithServers(cfg.Addrs...), zklock.WithSessionTimeout(SessionTimeout))
	if err != nil {
		return fmt.Errorf("%s: session: %w", cfg.Proc, err)
	}
	defer s.Close()
	var wid atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sampleWorker(ctx, cfg.Proc, samplePath(cfg.LogPath)) }()
	for i, prim := range Primitives {
		n := 1
		if prim == "cohort" {
			n = CohortSize
		}
		for g := range n {
			acq, err := newAcquirer(s, prim, cfg.Paths.Lock(prim), cfg.Limit)
			if err != nil {
				return err
			}
			w := &workload{prim: prim, g: g, proc: cfg.Proc, paths: cfg.Paths, s: s, acquire: acq, log: log,
				rnd: rand.New(rand.NewPCG(cfg.Seed, uint64(i*CohortSize+g))), broken: cfg.Broken, wid: &wid}
			wg.Add(1)
			go func() { defer wg.Done(); w.run(ctx) }()
		}
	}
	wg.Wait()
	return nil
}

// Paths lays out a run's nodes under Root.
type Paths struct{ Root string }

// Lock is prim's lock path.
func (p Paths) Lock(prim string) string { return p.Root + "/locks/" + prim }

// Counter is the node holding prim's counter.
func (p Paths) Counter(prim string) string { return p.Root + "/data/" + prim + "/counter" }

// Receipts is the parent of prim's receipts.
func (p Paths) Receipts(prim string) string { return p.Root + "/data/" + prim + "/r" }

// workerLife bounds a worker process's life in case its coordinator never
// closes its stdin; runs must be shorter.
const workerLife = 6 * time.Hour

// MainWorker runs this process as a worker, configured by its environment,
// and returns its exit code. A TestMain calls it when IsWorker.
func MainWorker() int {
	cfg, err := WorkerFromEnv()
	if err == nil {
		err = RunWorker(cfg, os.Stdin, workerLife)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "chaos worker:", err)
		return 1
	}
	return 0
}
