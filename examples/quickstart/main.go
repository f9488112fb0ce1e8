// Command quickstart shows zklock.Mutex at work: a few workers, each with a
// ZooKeeper session of its own as if it were its own process, take turns
// holding one lock. It prints every acquisition in order with its fencing
// token, then checks two claims and exits non-zero if either fails:
//
//   - mutual exclusion: an in-process counter of current holders, raised
//     after Lock returns and lowered before Unlock, never exceeded 1;
//   - fencing: the tokens (Mutex.Token) strictly increased.
//
// Servers come from ZK_SERVERS (host:port,...). Without it, a throwaway
// standalone ZooKeeper is started from the local installation (see package
// zktest) and removed at the end; `make demo` installs one first.
//
//	go run ./examples/quickstart [-workers 5] [-rounds 3] [-hold 10ms]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// runLimit bounds the whole run, including a cold start of ZooKeeper on a
// busy machine; the demo itself takes well under a second.
const runLimit = 2 * time.Minute

type config struct {
	workers int
	rounds  int
	hold    time.Duration
}

func main() {
	var cfg config
	flag.IntVar(&cfg.workers, "workers", 5, "workers, each with its own session (1-100)")
	flag.IntVar(&cfg.rounds, "rounds", 3, "times each worker takes the lock (1-100)")
	flag.DurationVar(&cfg.hold, "hold", 10*time.Millisecond, "how long each acquisition holds the lock (at most 1s)")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, cfg)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "quickstart:", err)
		os.Exit(1)
	}
}

func run(ctx context.Context, out io.Writer, cfg config) (err error) {
	if cfg.workers < 1 || cfg.workers > 100 || cfg.rounds < 1 || cfg.rounds > 100 ||
		cfg.hold < 0 || cfg.hold > time.Second {
		return fmt.Errorf("-workers %d -rounds %d -hold %v: out of range", cfg.workers, cfg.rounds, cfg.hold)
	}
	ctx, cancel := context.WithTimeout(ctx, runLimit)
	defer cancel()
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",")
	if servers[0] != "" {
		fmt.Fprintf(out, "ZooKeeper: %s (from ZK_SERVERS)\n", strings.Join(servers, ","))
	} else {
		cluster, err := zktest.Launch(ctx, 1)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, cluster.Close()) }()
		servers = cluster.Servers()
		fmt.Fprintf(out, "ZooKeeper: throwaway server at %s, started in %v\n",
			cluster.ConnectString(), cluster.StartupTime().Round(time.Millisecond))
	}

	// A path of its own, so that runs sharing servers do not share the lock.
	path := "/zklock-quickstart/run-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	fmt.Fprintf(out, "%d workers x %d rounds, one session each, contend for one zklock.Mutex at %s\n",
		cfg.workers, cfg.rounds, path)
	var t tally
	if err := t.contend(ctx, servers, path, cfg); err != nil {
		return err
	}
	for i, a := range t.order {
		fmt.Fprintf(out, "%4d. worker %d  token %d\n", i+1, a.worker, a.token)
	}
	if err := check(t.order, t.maxHeld, cfg.workers*cfg.rounds); err != nil {
		return err
	}
	fmt.Fprintf(out, "OK: %d acquisitions; never more than 1 holder at once; fencing tokens strictly increased\n",
		len(t.order))
	return nil
}

// acquisition is one turn of a worker with the lock.
type acquisition struct {
	worker int
	token  int64
}

// tally records the acquisitions in the order they happened and how many
// workers held the lock at once, at most.
type tally struct {
	holders atomic.Int32

	mu      sync.Mutex
	maxHeld int32
	order   []acquisition
}

// contend runs the workers, each with a session of its own, and returns the
// first error; a failed worker stops the others.
func (t *tally) contend(ctx context.Context, servers []string, path string, cfg config) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	mutexes := make([]*zklock.Mutex, cfg.workers)
	for i := range mutexes {
		s, err := zklock.NewSession(ctx, zklock.WithServers(servers...))
		if err != nil {
			return fmt.Errorf("worker %d: %w", i+1, err)
		}
		defer s.Close()
		if mutexes[i], err = zklock.NewMutex(s, path); err != nil {
			return err
		}
	}
	errs := make([]error, cfg.workers)
	var wg sync.WaitGroup
	for i, m := range mutexes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if errs[i] = t.work(ctx, m, i+1, cfg); errs[i] != nil {
				cancel()
			}
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// work takes the lock cfg.rounds times. The holder count goes up only once
// Lock has returned and down before Unlock starts, so it counts every moment
// a worker believes it holds the lock.
func (t *tally) work(ctx context.Context, m *zklock.Mutex, worker int, cfg config) error {
	for range cfg.rounds {
		if err := m.Lock(ctx); err != nil {
			return fmt.Errorf("worker %d: lock: %w", worker, err)
		}
		t.enter(acquisition{worker: worker, token: m.Token()})
		select {
		case <-time.After(cfg.hold): // the critical section
		case <-ctx.Done():
		}
		t.holders.Add(-1)
		if err := m.Unlock(ctx); err != nil {
			return fmt.Errorf("worker %d: unlock: %w", worker, err)
		}
	}
	return nil
}

func (t *tally) enter(a acquisition) {
	n := t.holders.Add(1)
	t.mu.Lock()
	defer t.mu.Unlock()
	t.maxHeld = max(t.maxHeld, n)
	t.order = append(t.order, a)
}

// check verifies the demo's claims: at most one holder at a time, the
// expected number of acquisitions, and strictly increasing tokens.
func check(order []acquisition, maxHeld int32, want int) error {
	if maxHeld > 1 {
		return fmt.Errorf("mutual exclusion violated: %d workers held the lock at once", maxHeld)
	}
	if len(order) != want {
		return fmt.Errorf("%d acquisitions recorded, want %d", len(order), want)
	}
	for i := 1; i < len(order); i++ {
		if order[i].token <= order[i-1].token {
			return fmt.Errorf("fencing tokens did not increase: acquisition %d has %d after %d",
				i+1, order[i].token, order[i-1].token)
		}
	}
	return nil
}
