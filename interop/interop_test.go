package interop_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "zklock-interop-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	classDir = dir
	goleak.VerifyTestMain(m, goleak.Cleanup(func(code int) {
		os.RemoveAll(dir)
		os.Exit(code)
	}))
}

// Each contention case runs a few cycles per party: JVMs start slowly, and
// the point is the mix of libraries on one queue, not the volume.
const (
	cycles = 4
	hold   = 20 * time.Millisecond
)

var holdMS = fmt.Sprint(hold.Milliseconds())

// sessionTimeout is what every client asks for. The server grants up to
// 20s: a JVM or a Python process stalled on a loaded machine must not lose
// its session in the middle of a case, which would make its lock vanish.
const sessionTimeout = 10 * time.Second

// testTimeout bounds each test's blocking calls.
const testTimeout = 3 * time.Minute

// world is one test's ZooKeeper, shared log and lock path.
type world struct {
	t    *testing.T
	zk   *zktest.Cluster
	log  *sharedLog
	path string
	ctx  context.Context

	observer *zklock.Session // waitQueue's, opened on its first call
}

// newWorld starts a ZooKeeper for the test, after checking what the test
// needs (needCurator, needKazoo): a missing runtime fails the test at once.
func newWorld(t *testing.T, needs ...func(*testing.T)) *world {
	t.Helper()
	for _, need := range needs {
		need(t)
	}
	zk := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	path := "/interop/" + strings.NewReplacer("/", "_", " ", "_").Replace(t.Name())
	return &world{t: t, zk: zk, log: newLog(t), path: path, ctx: ctx}
}

func (w *world) connect() string { return w.zk.ConnectString() }

// args returns a driver's arguments on w's path and log.
func (w *world) args(id, mode string, cycles int, hold string, extra ...string) driverArgs {
	return driverArgs{connect: w.connect(), path: w.path, id: id, log: w.log.path,
		mode: mode, cycles: cycles, hold: hold, extra: extra}
}

// session opens a zklock session, closed when the test ends.
func (w *world) session() *zklock.Session {
	w.t.Helper()
	s, err := zklock.NewSession(w.ctx, zklock.WithServers(w.zk.Servers()...), zklock.WithSessionTimeout(sessionTimeout))
	if err != nil {
		w.t.Fatalf("NewSession: %v", err)
	}
	w.t.Cleanup(func() { s.Close() })
	return s
}

// acquirer takes a zklock primitive once and returns how to give it back.
type acquirer func(ctx context.Context) (release func(context.Context) error, err error)

// goParty is a zklock client in the test process.
type goParty struct {
	id, mode string
	acquire  acquirer
}

// contend runs every party for cycles acquisitions each, holding each one
// for hold, all starting together: the drivers are started and connected
// first (JVMs take seconds), then everybody is told to go at once.
func (w *world) contend(gos []goParty, procs []*proc, cycles int, hold time.Duration) {
	t := w.t
	t.Helper()
	for _, p := range procs {
		p.expect(t, "ready")
	}
	start := make(chan struct{})
	errs := make(chan error, len(gos))
	for _, g := range gos {
		go func() { errs <- w.cycle(g, start, cycles, hold) }()
	}
	close(start)
	for _, p := range procs {
		p.send(t, "go")
	}
	var failed []error
	for range gos {
		if err := <-errs; err != nil {
			failed = append(failed, err)
		}
	}
	for _, p := range procs {
		out := p.finish(t)
		if n := count(out, "held "); n != cycles {
			t.Errorf("%s held %d times, want %d", p.name, n, cycles)
		}
	}
	for _, err := range failed {
		t.Error(err)
	}
}

// cycle is one zklock party's loop. It runs on its own goroutine, so it
// reports errors instead of failing the test.
func (w *world) cycle(g goParty, start <-chan struct{}, cycles int, hold time.Duration) error {
	<-start
	for c := 1; c <= cycles; c++ {
		release, err := g.acquire(w.ctx)
		if err != nil {
			return fmt.Errorf("%s cycle %d: acquire: %w", g.id, c, err)
		}
		if err := w.log.record(g.id, "start", g.mode); err != nil {
			return err
		}
		time.Sleep(hold)
		if err := w.log.record(g.id, "end", g.mode); err != nil {
			return err
		}
		if err := release(w.ctx); err != nil {
			return fmt.Errorf("%s cycle %d: release: %w", g.id, c, err)
		}
	}
	return nil
}

// wants returns the acquisitions expected of each party: cycles each.
func wants(cycles int, ids ...string) map[string]int {
	m := make(map[string]int, len(ids))
	for _, id := range ids {
		m[id] = cycles
	}
	return m
}

// mutexParty is a zklock Mutex with its own session.
func (w *world) mutexParty(id string) goParty {
	m, err := zklock.NewMutex(w.session(), w.path, zklock.WithData([]byte(id)))
	if err != nil {
		w.t.Fatal(err)
	}
	return goParty{id, "mutex", func(ctx context.Context) (func(context.Context) error, error) {
		return m.Unlock, m.Lock(ctx)
	}}
}

// step records a zklock client's step in the log, failing the test if
// the step itself (err) failed.
func (w *world) step(id, what, mode string, err error) {
	w.t.Helper()
	if err != nil {
		w.t.Fatalf("%s %s %s: %v", id, what, mode, err)
	}
	if err := w.log.record(id, what, mode); err != nil {
		w.t.Fatal(err)
	}
}
