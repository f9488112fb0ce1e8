package zklock_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/exampleserver"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
	"go.uber.org/goleak"
)

// TestMain points ZK_SERVERS at the examples' ZooKeeper (started on the
// first connection: see internal/exampleserver), runs the tests, stops it, and
// then, as goleak.VerifyTestMain does, fails a passing run that leaked
// goroutines.
func TestMain(m *testing.M) {
	if err := exampleserver.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	stopShared()
	exampleserver.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// testTimeout bounds every test's blocking calls.
const testTimeout = 60 * time.Second

// Most tests here call t.Parallel: they spend their time waiting (for a
// session to time out, a proxy's latency, a JVM to start), each on paths of
// its own (lockPath). Those that are not run first, alone: the ones whose
// assertions bound a wall time closely (a loss signal within a second of the
// deadline, a rival's watch set within a 300ms hold, a paused leader's
// timing) or that wait on a 2s session through 50 reconnects.

// standalone starts a standalone server of the test's own (stopped at
// cleanup), which the test may stop, kill or pause.
func standalone(t *testing.T) *zktest.Cluster {
	t.Helper()
	return zktest.Start(t)
}

// sharedZK is the server of shared: started by the first test that asks,
// stopped by TestMain.
var sharedZK struct {
	once sync.Once
	c    *zktest.Cluster
	err  error
}

// sharedServer is what shared returns: the addresses of a server that other
// tests use at the same time, what it holds by session, and no way to
// stop, kill, pause, count or configure it, so a test that does any of
// these does not compile with it.
type sharedServer struct {
	addrs []string
	c     *zktest.Cluster
}

// Servers returns the server's client address.
func (s sharedServer) Servers() []string { return s.addrs }

// Ephemerals returns the server's ephemeral nodes by owning session, every
// test's: a test looks only at its own sessions' (see zktest's).
func (s sharedServer) Ephemerals(ctx context.Context) (map[int64][]string, error) {
	return s.c.Ephemerals(ctx)
}

// Watches returns the server's data and exists watches by session, every
// test's: a test looks only at its own sessions' (see zktest's).
func (s sharedServer) Watches(ctx context.Context) (map[int64][]string, error) {
	return s.c.Watches(ctx)
}

// TickTime returns the server's tick.
func (s sharedServer) TickTime() time.Duration { return s.c.TickTime() }

// ExpireSession expires session sid, whose client is connected through p
// alone, as zktest.ExpireSession does: no other session is touched.
func (s sharedServer) ExpireSession(ctx context.Context, p *zktest.Proxy, sid int64) error {
	return zktest.ExpireSession(ctx, s.c, p, sid)
}

// server is what a test or helper that reads only its own sessions'
// entries uses: a server of the test's own or the shared one.
type server interface {
	Servers() []string
	Ephemerals(ctx context.Context) (map[int64][]string, error)
	Watches(ctx context.Context) (map[int64][]string, error)
}

var _, _ server = (*zktest.Cluster)(nil), sharedServer{}

// shared returns a standalone server that tests running in parallel share,
// each on its own paths (lockPath), sparing each a JVM's start (0.7s of
// CPU). It is for tests that talk to the server, read their own sessions'
// ephemeral nodes and watches, and expire their own sessions through a
// proxy: one that faults the server, counts its watches, packets or
// sessions, reads another session's entries, or sets an ACL on a parent
// it does not own needs standalone.
func shared(t *testing.T) sharedServer {
	t.Helper()
	z := &sharedZK
	z.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		z.c, z.err = zktest.Launch(ctx, 1)
	})
	if z.err != nil {
		t.Fatalf("the shared ZooKeeper: %v", z.err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("the shared ZooKeeper's log (all tests'), last lines:\n%s", lastLines(z.c.Server(0).Log(), 60))
		}
	})
	return sharedServer{addrs: z.c.Servers(), c: z.c}
}

// stopShared stops the shared server if a test started it.
func stopShared() {
	if sharedZK.c != nil {
		if err := sharedZK.c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}

// ctxFor returns a context bounded by testTimeout and cancelled at cleanup.
func ctxFor(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	t.Cleanup(cancel)
	return ctx
}

// newSession opens a session on addrs with a short timeout, closed at
// cleanup.
func newSession(t *testing.T, addrs []string, opts ...zklock.SessionOption) *zklock.Session {
	t.Helper()
	all := append([]zklock.SessionOption{
		zklock.WithServers(addrs...),
		zklock.WithSessionTimeout(2 * time.Second),
	}, opts...)
	s, err := zklock.NewSession(ctxFor(t), all...)
	if err != nil {
		t.Fatalf("NewSession: %v", err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// lockPath returns a path unique to the test.
func lockPath(t *testing.T, name string) string {
	r := strings.NewReplacer("/", "_", " ", "_", "#", "_")
	return "/zklock-test/" + r.Replace(t.Name()) + "/" + name
}

// eventually polls cond every 20ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// lossBeforeRival starts rival.Lock, runs cut (if not nil: the fault that
// ends the holder's ownership) and requires the holder's loss signal, lost,
// to close before the rival holds, and the rival to hold; it returns when
// each happened.
func lossBeforeRival(ctx context.Context, t *testing.T, lost <-chan struct{}, rival *zklock.Mutex, cut func()) (lostAt, rivalAt time.Time) {
	t.Helper()
	got := make(chan time.Time, 1)
	go func() {
		if rival.Lock(ctx) == nil {
			got <- time.Now()
		}
	}()
	if cut != nil {
		cut()
	}
	select {
	case <-lost:
		lostAt = time.Now()
	case at := <-got:
		select { // how long the two believed they held together
		case <-lost:
			t.Fatalf("rival held at %v, %v before the holder's loss signal", at, time.Since(at))
		case <-ctx.Done():
			t.Fatalf("rival held at %v, and the holder had no loss signal", at)
		}
	case <-ctx.Done():
		t.Fatal("no loss signal")
	}
	select {
	case rivalAt = <-got:
	case <-ctx.Done():
		t.Fatal("the rival never held")
	}
	if !rivalAt.After(lostAt) {
		t.Fatalf("loss signal at %v, rival held at %v", lostAt, rivalAt)
	}
	return lostAt, rivalAt
}

// locker is docs/api.md's sync.Locker adapter, which the tests check.
type locker struct{ lock, unlock func(context.Context) error }

func (l locker) Lock() {
	if err := l.lock(context.Background()); err != nil {
		panic(err)
	}
}

func (l locker) Unlock() {
	if err := l.unlock(context.Background()); err != nil {
		panic(err)
	}
}

// requireServersTiming checks the servers' timing a session reports (Tick,
// SyncLimit, Source) against want, whose Timeout is left zero: the session
// timeout is the negotiated one, which the timing tests do not pin; it
// must be set.
func requireServersTiming(t *testing.T, want, got zk.Timing, msgAndArgs ...any) {
	t.Helper()
	if got.Timeout <= 0 {
		t.Fatalf("timing %+v without a session timeout", got)
	}
	got.Timeout = 0
	if got != want {
		t.Fatalf("timing %+v, want %+v (Timeout aside) %v", got, want, fmt.Sprint(msgAndArgs...))
	}
}

// termContext is the context Term's doc tells Campaign's callers to make:
// cancelled, with term.Err as its cause, when the term ends.
func termContext(parent context.Context, term *zklock.Term) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-term.Lost():
			cancel(term.Err())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(nil) }
}
