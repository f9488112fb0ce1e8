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
	"github.com/zklock/zklock/zktest"
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
	// EnvSyncLimit, on a Stock run: the syncLimit the worker states
	// (WithEnsembleTiming, with zktest's default tick).
	EnvSyncLimit = "ZKLOCK_CHAOS_SYNC_LIMIT"
	// EnvPG (postgres.go): the PostgreSQL resource's connection string
)

// SessionTimeout is what workers ask for with the servers' default
// syncLimit (zktest.DefaultSyncLimit); the servers grant at most their
// maxSessionTimeout (6s for a zktest ensemble's defaults). Through a
// follower a session must outlast syncLimit*tickTime (1.5s here) plus a
// tick and a half and the margin, more than 2s: zklock refuses 2s.
const SessionTimeout = 3 * time.Second

// SessionTimeoutFor is the session timeout of a run whose servers' syncLimit
// is syncLimit ticks of zktest's default tick: SessionTimeout, or for a
// longer syncLimit the shortest zklock accepts (see
// zklock.WithSessionTimeout) and 750ms more, in whole tenths of a second.
func SessionTimeoutFor(syncLimit int) time.Duration {
	if syncLimit <= zktest.DefaultSyncLimit {
		return SessionTimeout
	}
	tick := zktest.DefaultTickTime
	need := (time.Duration(syncLimit)*tick + tick*3/2) * 5 / 4
	return (need + 750*time.Millisecond).Round(100 * time.Millisecond)
}

// Broken selects deliberate bugs in the workload, to show that the checker
// catches each: "noguard" writes without the hold's guard, "ignorelost"
// keeps believing (and writing) after the loss signal, "latelost" keeps
// the guard but acts on the loss signal a session timeout late, as a
// zklock whose signal came late would, "latedeadline" logs an ownership
// deadline a session timeout later than the session's, as a zklock that
// overstated it would, "nofence" writes the PostgreSQL resource without
// the fence; comma-separated.
type Broken struct{ NoGuard, IgnoreLost, LateLost, LateDeadline, NoFence bool }

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
		case "latelost":
			b.LateLost = true
		case "latedeadline":
			b.LateDeadline = true
		case "nofence":
			b.NoFence = true
		default:
			return b, fmt.Errorf("chaos: %s: unknown bug %q", EnvBroken, f)
		}
	}
	return b, nil
}

// BrokenFor returns the bugs spec (Config.Broken) gives zklock worker id:
// spec is either bugs for every worker ("noguard,ignorelost") or
// ";"-separated entries "ID=bugs" ("1=noguard,ignorelost;2=latelost"), and
// the workers it does not name are not broken. It fails on a malformed
// spec or an unknown bug.
func BrokenFor(spec string, id int) (string, error) {
	if !strings.Contains(spec, "=") {
		_, err := ParseBroken(spec)
		return spec, err
	}
	var mine string
	for _, e := range strings.Split(spec, ";") {
		k, bugs, ok := strings.Cut(strings.TrimSpace(e), "=")
		n, err := strconv.Atoi(k)
		if !ok || err != nil {
			return "", fmt.Errorf("chaos: broken spec %q: entry %q is not ID=bugs", spec, e)
		}
		if _, err := ParseBroken(bugs); err != nil {
			return "", err
		}
		if n == id {
			mine = bugs
		}
	}
	return mine, nil
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
	Session time.Duration // the session timeout to ask for
	// SyncLimit, if set, is stated with WithEnsembleTiming (zktest's
	// default tick): the servers refuse 'conf' (Config.Stock).
	SyncLimit int
	PG        string // the PostgreSQL resource's connection string, "" for none
}

// IsWorker reports whether this process was started as a worker.
func IsWorker() bool { return os.Getenv(EnvProc) != "" }

// WorkerFromEnv reads a worker's configuration from its environment.
func WorkerFromEnv() (WorkerConfig, error) {
	seed, err1 := strconv.ParseUint(os.Getenv(EnvSeed), 10, 64)
	limit, err2 := strconv.Atoi(os.Getenv(EnvLimit))
	broken, err3 := ParseBroken(os.Getenv(EnvBroken))
	ms, err4 := strconv.Atoi(os.Getenv(EnvSessionMS))
	cfg := WorkerConfig{
		Proc: os.Getenv(EnvProc), Addrs: strings.Split(os.Getenv(EnvAddrs), ","),
		LogPath: os.Getenv(EnvLog), Paths: Paths{Root: os.Getenv(EnvRoot)},
		Seed: seed, Limit: limit, Broken: broken, Session: time.Duration(ms) * time.Millisecond,
		PG: os.Getenv(EnvPG),
	}
	var err5 error
	if v := os.Getenv(EnvSyncLimit); v != "" {
		cfg.SyncLimit, err5 = strconv.Atoi(v)
	}
	return cfg, errors.Join(err1, err2, err3, err4, err5)
}

// RunWorker runs every primitive's workload over one session until stop is
// closed (the coordinator closes the worker's stdin), then releases, closes
// the session and returns. A log it cannot write ends the run with that
// error: the checker must not judge a history with holes in it.
func RunWorker(cfg WorkerConfig, stop io.Reader, limit time.Duration) error {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	defer cancel()
	go func() { _, _ = io.Copy(io.Discard, stop); cancel() }()
	log, err := CreateLog(cfg.LogPath)
	if err != nil {
		return err
	}
	defer log.Close()
	var failed error
	var once sync.Once
	fail := func(err error) { once.Do(func() { failed = fmt.Errorf("%s: log: %w", cfg.Proc, err); cancel() }) }
	opts := []zklock.SessionOption{zklock.WithServers(cfg.Addrs...), zklock.WithSessionTimeout(cfg.Session)}
	if cfg.SyncLimit > 0 {
		opts = append(opts, zklock.WithEnsembleTiming(zktest.DefaultTickTime, cfg.SyncLimit))
	}
	s, err := zklock.NewSession(ctx, opts...)
	if err != nil {
		return fmt.Errorf("%s: session: %w", cfg.Proc, err)
	}
	defer s.Close()
	var pg *pgStore
	if cfg.PG != "" {
		if pg, err = openPG(cfg.PG); err != nil {
			return fmt.Errorf("%s: postgres: %w", cfg.Proc, err)
		}
		defer pg.db.Close()
	}
	var wid atomic.Int64
	var wg sync.WaitGroup
	wg.Add(1)
	go func() { defer wg.Done(); sampleWorker(ctx, cfg.Proc, samplePath(cfg.LogPath), fail) }()
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
			w := &workload{prim: prim, g: g, proc: cfg.Proc, paths: cfg.Paths, s: s, acquire: acq, log: log, fail: fail,
				rnd: rand.New(rand.NewPCG(cfg.Seed, uint64(i*CohortSize+g))), broken: cfg.Broken, wid: &wid, pg: pg}
			wg.Add(1)
			go func() { defer wg.Done(); w.run(ctx) }()
		}
	}
	wg.Wait()
	once.Do(func() {}) // no failure after this
	return failed
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
