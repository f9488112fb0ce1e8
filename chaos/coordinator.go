package chaos

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Config is one chaos run.
type Config struct {
	Duration time.Duration // how long faults are injected
	Seed     uint64        // drives the fault schedule and the workloads
	Workers  int           // client processes
	Limit    int           // the semaphore's limit
	Broken   string        // bugs of the zklock workers (see BrokenFor): all of them, or some by id
	Victims  []int         // if set, client faults hit these zklock workers in turn instead of a holder
	Faults   int           // if set, the run stops after that many faults, Duration or not
	Dir      string        // where logs go
	Kinds    []string      // fault kinds to draw from; nil means FaultKinds
	Keep     int           // workers 1..Keep are never killed, so that their growth is judged (a soak)
	Curator  int           // Curator worker processes (java/CuratorWorker.java) joining the zklock workers
	Kazoo    int           // Kazoo worker processes (python/kazoo_worker.py) joining them on the mutex
	Fsync    bool          // servers fsync before they acknowledge (zktest.WithFsync; make soak)
	// Postgres adds the PostgreSQL resource: a server the run starts
	// (fence/pgtest, with fsync when Fsync), which the zklock workers'
	// exclusive holders write through the fence (see pgWrite).
	Postgres bool
	// SyncLimit is the servers' syncLimit in ticks (0: zktest's default);
	// the session timeout follows it (SessionTimeoutFor).
	SyncLimit int
	// Stock runs the servers with a stock ZooKeeper's four-letter-word
	// whitelist, which refuses 'conf' (srvr, and mntr for the suite's
	// samples): the clients state the timing (WithEnsembleTiming) with
	// statedSyncLimit, the most a config-roll fault sets.
	Stock bool
}

// syncLimit is the servers' syncLimit at the start, in ticks.
func (cfg Config) syncLimit() int {
	if cfg.SyncLimit > 0 {
		return cfg.SyncLimit
	}
	return zktest.DefaultSyncLimit
}

// statedSyncLimit is the most a config-roll sets: on a Stock run twice the
// start's (the clients are told so), otherwise the start's (the clients
// learn what the servers tell, and a session timeout made for it stays
// long enough).
func (cfg Config) statedSyncLimit() int {
	if cfg.Stock {
		return 2 * cfg.syncLimit()
	}
	return cfg.syncLimit()
}

// timing is the clients' WithEnsembleTiming on a Stock run, or nil.
func (cfg Config) timing() []zklock.SessionOption {
	if !cfg.Stock {
		return nil
	}
	return []zklock.SessionOption{zklock.WithEnsembleTiming(zktest.DefaultTickTime, cfg.statedSyncLimit())}
}

// session is the session timeout of the run's clients: long enough for the
// longest syncLimit a config-roll sets.
func (cfg Config) session() time.Duration {
	if cfg.Stock {
		return SessionTimeoutFor(cfg.statedSyncLimit())
	}
	return SessionTimeoutFor(cfg.SyncLimit)
}

// coordinator runs the cluster, the workers and the fault schedule.
type coordinator struct {
	cfg     Config
	cluster *zktest.Cluster
	admin   *admin
	procs   *procs
	workers []*worker
	faults  []Fault
	flog    *Log
	nodes   *nodeWatcher // nil without peer workers
	pg      *pgServer    // nil without Config.Postgres
	mu      sync.Mutex
	samples []Sample // the servers'
}

// Run starts a 3-server ensemble and cfg.Workers worker processes (this
// executable re-run: its TestMain must hand workers to MainWorker), injects
// faults for cfg.Duration, stops the workers, and checks what happened.
// Setup failures fail t; the checker's verdict is in the Report.
func Run(t testing.TB, cfg Config) *Report {
	t.Helper()
	if err := cfg.check(); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), cfg.Duration+10*time.Minute)
	defer cancel()
	opts := []zktest.Option{zktest.WithPeerNetwork()}
	if cfg.SyncLimit > 0 {
		opts = append(opts, zktest.WithSyncLimit(cfg.SyncLimit))
	}
	if cfg.Fsync {
		opts = append(opts, zktest.WithFsync())
	}
	if cfg.Stock {
		opts = append(opts, zktest.WithFourLetterWords("srvr", "mntr"))
	}
	if cfg.Dir != "" {
		// A failed run leaves the servers' logs and transaction logs by
		// the workers' (a temporary Dir goes with the test).
		opts = append(opts, zktest.WithKeepOnFailure(filepath.Join(cfg.Dir, "servers")))
	}
	c := &coordinator{cfg: cfg, cluster: zktest.StartEnsemble(t, 3, opts...)}
	if err := c.setup(ctx, t); err != nil {
		t.Fatal(err)
	}
	defer c.admin.s.Close()
	defer c.flog.Close()
	var wg sync.WaitGroup
	hctx, stopHarvest := context.WithCancel(ctx)
	wg.Add(1)
	go func() { defer wg.Done(); c.harvestLoop(hctx) }()
	wg.Add(1)
	go func() { defer wg.Done(); c.sampleLoop(hctx) }()
	start := Now()
	c.schedule(ctx, t)
	stop := Now()
	for _, w := range c.workers {
		w.proxy.Heal()
		c.procs.stop(w)
	}
	stopHarvest()
	wg.Wait()
	run, err := c.collect(ctx, start, stop)
	if err != nil {
		t.Fatal(err)
	}
	return Check(run)
}

// check rejects a configuration Run cannot honour.
func (cfg Config) check() error {
	if cfg.Keep < 0 || cfg.Keep >= cfg.Workers {
		return fmt.Errorf("chaos: Keep %d: need 0 <= Keep < Workers (%d): some worker must be killable", cfg.Keep, cfg.Workers)
	}
	for _, v := range cfg.Victims {
		if v < 1 || v > cfg.Workers {
			return fmt.Errorf("chaos: victim %d: need 1 <= victim <= Workers (%d)", v, cfg.Workers)
		}
	}
	_, err := BrokenFor(cfg.Broken, 0)
	return err
}

func (c *coordinator) setup(ctx context.Context, t testing.TB) error {
	if c.cfg.Dir == "" {
		c.cfg.Dir = t.TempDir()
	} else if err := os.MkdirAll(c.cfg.Dir, 0o755); err != nil {
		return err
	}
	t.Logf("logs in %s", c.cfg.Dir)
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	root := "/chaos-" + strconv.FormatUint(c.cfg.Seed, 10)
	s, err := zklock.NewSession(ctx, append(c.cfg.timing(), zklock.WithServers(c.cluster.Servers()...),
		zklock.WithSessionTimeout(c.cfg.session()))...)
	if err != nil {
		return err
	}
	c.admin = &admin{s: s, paths: Paths{Root: root}, seen: map[string]map[int64]Receipt{}}
	if err := c.admin.layout(ctx); err != nil {
		return err
	}
	if c.flog, err = CreateLog(filepath.Join(c.cfg.Dir, "faults.jsonl")); err != nil {
		return err
	}
	c.procs = &procs{exe: exe, dir: c.cfg.Dir, seed: c.cfg.Seed, broken: c.cfg.Broken, session: c.cfg.session(), env: []string{
		EnvRoot + "=" + root, EnvLimit + "=" + strconv.Itoa(c.cfg.Limit)}}
	if c.cfg.Stock {
		c.procs.env = append(c.procs.env, EnvSyncLimit+"="+strconv.Itoa(c.cfg.statedSyncLimit()))
	}
	if c.cfg.Postgres {
		if c.pg, err = startPostgres(ctx, t, c.cfg.Fsync); err != nil {
			return fmt.Errorf("postgres: %w", err)
		}
		c.procs.env = append(c.procs.env, EnvPG+"="+c.pg.s.DSN())
	}
	if dirs := c.peerDirs(); len(dirs) > 0 {
		if c.nodes, err = startNodeWatcher(ctx, c.cluster.Servers(), dirs, filepath.Join(c.cfg.Dir, nodesFile)); err != nil {
			return err
		}
		t.Cleanup(c.nodes.close)
	}
	for i := 1; i <= c.cfg.Workers; i++ {
		w := &worker{id: i, proxy: zktest.NewProxy(t, c.cluster.Servers())}
		if err := c.procs.start(w); err != nil {
			return err
		}
		t.Cleanup(func() { c.procs.kill(w, "") })
		c.workers = append(c.workers, w)
	}
	return c.startPeers(ctx, t)
}

// schedule injects faults, one at a time with a quiet spell after each,
// until cfg.Duration has passed or cfg.Faults were injected. Kinds are drawn from a shuffled bag, so
// every kind comes once before any comes twice.
func (c *coordinator) schedule(ctx context.Context, t testing.TB) {
	rnd := rand.New(rand.NewPCG(c.cfg.Seed, 0x5eed))
	in := &injector{cluster: c.cluster, procs: c.procs, workers: c.workers,
		admin: c.admin.s, paths: c.admin.paths, rnd: rnd, keep: c.cfg.Keep, session: c.cfg.session(),
		syncLimit: c.cfg.syncLimit(), maxSyncLimit: c.cfg.statedSyncLimit()}
	for _, v := range c.cfg.Victims {
		in.victims = append(in.victims, c.workers[v-1])
	}
	kinds := c.cfg.Kinds
	if kinds == nil {
		kinds = FaultKinds
	}
	deadline := time.Now().Add(c.cfg.Duration)
	sleep(ctx, 3*time.Second) // let every workload get going
	var bag []string
	limit := 100_000
	if c.cfg.Faults > 0 {
		limit = c.cfg.Faults
	}
	for i := 0; i < limit && time.Now().Before(deadline) && ctx.Err() == nil; i++ {
		if len(bag) == 0 {
			bag = slices.Clone(kinds)
			rnd.Shuffle(len(bag), func(i, j int) { bag[i], bag[j] = bag[j], bag[i] })
		}
		f := in.do(ctx, bag[0])
		bag = bag[1:]
		c.faults = append(c.faults, f)
		_ = c.flog.Add(f)
		// A failed fault is a violation in the report (Check), so that a
		// recheck of the outcome sees it too.
		t.Logf("fault %d: %s %s for %v %s %s", i+1, f.Kind, f.Target, dur(f.End-f.Start).Round(time.Millisecond), f.Detail, f.Err)
		if i+1 < limit {
			sleep(ctx, in.between(time.Second, 2500*time.Millisecond))
		}
	}
}

// harvestLoop collects receipts every few seconds; a failed round (servers
// restarting) is simply tried again later.
func (c *coordinator) harvestLoop(ctx context.Context) {
	for i := 0; i < 1_000_000 && ctx.Err() == nil; i++ {
		sleep(ctx, 3*time.Second)
		_ = c.admin.harvest(ctx)
	}
}

// sampleLoop reads the servers' nodes and watches every SampleEvery; a
// round in which a server does not answer (a fault) is skipped.
func (c *coordinator) sampleLoop(ctx context.Context) {
	for i := 0; i < 1_000_000 && ctx.Err() == nil; i++ {
		s, err := sampleServers(ctx, c.cluster)
		var pending int64
		if err == nil {
			pctx, cancel := context.WithTimeout(ctx, SampleEvery)
			pending, err = c.admin.pending(pctx)
			cancel()
		}
		if err == nil {
			// Receipts come and go with the harvest rounds (a few hundred
			// between two rounds, more while a fault stops them), which
			// would hide or fake a growth of the nodes the run keeps.
			s.Nodes -= pending
			c.mu.Lock()
			c.samples = append(c.samples, s)
			c.mu.Unlock()
		}
		sleep(ctx, SampleEvery)
	}
}

// collect reads the final state once every worker has exited.
func (c *coordinator) collect(ctx context.Context, start, stop int64) (*Outcome, error) {
	run := &Outcome{Start: start, Stop: stop, Faults: c.faults, Limit: c.cfg.Limit, SessionTimeout: c.admin.s.Timing().Timeout}
	if err := again(ctx, time.Minute, func(ctx context.Context) error { return c.admin.harvest(ctx) }); err != nil {
		return nil, fmt.Errorf("final harvest: %w", err)
	}
	run.Receipts, run.Reused = c.admin.receipts(), c.admin.reused()
	err := again(ctx, time.Minute, func(ctx context.Context) (err error) { run.Counters, err = c.admin.counters(ctx); return err })
	if err != nil {
		return nil, fmt.Errorf("counters: %w", err)
	}
	if run.Leftover, err = c.leftovers(ctx); err != nil {
		return nil, err
	}
	if c.pg != nil {
		if run.PG, err = c.pg.collect(ctx); err != nil {
			return nil, fmt.Errorf("postgres: %w", err)
		}
	}
	exits, logs := c.procs.results()
	run.Exits = exits
	if c.nodes != nil {
		c.nodes.close() // the workers have exited: every node it will see is seen
	}
	c.mu.Lock()
	run.Samples = slices.Clone(c.samples)
	c.mu.Unlock()
	for _, p := range logs {
		evs, err := ReadEvents(p)
		if err != nil {
			return nil, err
		}
		run.Events = append(run.Events, evs...)
		ss, err := ReadSamples(samplePath(p))
		if err != nil {
			return nil, err
		}
		run.Samples = append(run.Samples, ss...)
		outPath := strings.TrimSuffix(p, ".jsonl") + ".out"
		out, _ := os.ReadFile(outPath)
		run.Crashes = append(run.Crashes, Crashes(filepath.Base(outPath), string(out))...)
	}
	if c.nodes != nil {
		if run.Nodes, err = readNodes(filepath.Join(c.cfg.Dir, nodesFile), peerNodes(run.Events)); err != nil {
			return nil, err
		}
	}
	return run, SaveOutcome(filepath.Join(c.cfg.Dir, OutcomeFile), run)
}

// leftovers waits until the lock paths hold no ephemeral node, for as long
// as the server may take to expire the sessions of killed workers, and
// returns what is left then.
func (c *coordinator) leftovers(ctx context.Context) ([]string, error) {
	deadline := time.Now().Add(c.cluster.ExpiryBound() + 5*time.Second)
	for i := 0; ; i++ {
		var left []string
		err := again(ctx, time.Minute, func(ctx context.Context) (err error) {
			left, err = c.admin.ephemerals(ctx, c.admin.paths.Root+"/locks")
			return err
		})
		if err != nil || len(left) == 0 || time.Now().After(deadline) || i == 10_000 {
			return left, err
		}
		sleep(ctx, 200*time.Millisecond)
	}
}
