package client_test

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
	"go.uber.org/goleak"
)

// shared is the standalone server most tests use, each under a path of its
// own. TTL nodes are enabled on it; it grants sessions of up to 20s so that
// a loaded machine does not lose a test's session by accident (tests of
// expiry ask for a short one).
var shared *zktest.Cluster

func TestMain(m *testing.M) {
	flag.Parse()
	if fuzzing() {
		// A fuzz target needs no server, and every fuzz worker process
		// runs TestMain again.
		goleak.VerifyTestMain(m)
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	c, err := zktest.Launch(ctx, 1,
		zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second),
		zktest.WithJVMFlags("-Dzookeeper.extendedTypesEnabled=true"))
	cancel()
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	shared = c
	// The shared server's goroutines run from here to the end; every other
	// goroutine must have ended when the tests have.
	goleak.VerifyTestMain(m, goleak.IgnoreCurrent(), goleak.Cleanup(func(code int) {
		c.Close()
		os.Exit(code)
	}))
}

// fuzzing reports whether the binary runs a fuzz target (-test.fuzz) or is
// one of the fuzzing engine's workers.
func fuzzing() bool {
	for _, name := range []string{"test.fuzz", "test.fuzzworker"} {
		if f := flag.Lookup(name); f != nil && f.Value.String() != "" && f.Value.String() != "false" {
			return true
		}
	}
	return false
}

// waitLimit bounds every wait in these tests: the machine may be slow, and
// no test asserts that anything is fast.
const waitLimit = 30 * time.Second

// testTimeout is the session timeout tests ask for unless they need
// another.
const testTimeout = 10 * time.Second

func bounded(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// dial connects to servers (the shared server if nil) with cfg, and closes
// the client at the end of the test.
func dial(t testing.TB, servers []string, cfg client.Config) *client.Client {
	t.Helper()
	if servers == nil {
		servers = shared.Servers()
	}
	cfg.Servers = servers
	if cfg.Timeout == 0 {
		cfg.Timeout = testTimeout
	}
	c, err := client.Dial(bounded(t), cfg)
	if err != nil {
		t.Fatalf("dial %v: %v", servers, err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// roots numbers the tests' root nodes, so that a test run again (-count)
// on the same server gets a fresh one.
var roots atomic.Int64

// root creates a persistent node for the test, named after it, and returns
// its path.
func root(t testing.TB, c *client.Client) string {
	t.Helper()
	p := fmt.Sprintf("/%s-%d", strings.NewReplacer("/", "_", " ", "_").Replace(t.Name()), roots.Add(1))
	if _, _, err := c.Create(bounded(t), p, nil, client.ModePersistent, client.WorldACL(client.PermAll)); err != nil {
		t.Fatalf("create %s: %v", p, err)
	}
	return p
}

var open = client.WorldACL(client.PermAll)

// states records the states a client reports, for tests to wait on.
type states struct {
	mu     sync.Mutex
	seen   []client.State
	infos  []client.StateInfo
	change chan struct{} // closed and replaced at each state
}

func newStates() *states { return &states{change: make(chan struct{})} }

func (s *states) on(st client.State, info client.StateInfo) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, st)
	s.infos = append(s.infos, info)
	close(s.change)
	s.change = make(chan struct{})
}

func (s *states) count(st client.State) (int, <-chan struct{}) {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, x := range s.seen {
		if x == st {
			n++
		}
	}
	return n, s.change
}

// wait waits until st has been reported n times in all.
func (s *states) wait(t testing.TB, st client.State, n int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		seen, change := s.count(st)
		if seen >= n {
			return
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("state %v reported %d times in %v, want %d", st, seen, waitLimit, n)
		}
	}
}

// last returns the info of the last report of st.
func (s *states) last(st client.State) (client.StateInfo, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.seen) - 1; i >= 0; i-- {
		if s.seen[i] == st {
			return s.infos[i], true
		}
	}
	return client.StateInfo{}, false
}

// next returns the watch's next event, failing the test if none comes
// within waitLimit.
func next(t testing.TB, w *client.Watch) client.Event {
	t.Helper()
	ev, err := w.Next(bounded(t))
	if err != nil {
		t.Fatalf("watch on %s (%v): %v", w.Path(), w.Kind(), err)
	}
	return ev
}

// pending reports whether an event is queued on w without waiting.
func pending(w *client.Watch) bool {
	select {
	case <-w.Ready():
		return true
	default:
		return false
	}
}

// startServer starts a standalone server for one test, with zktest's
// defaults but sessions of up to 20s.
func startServer(t testing.TB, opts ...zktest.Option) *zktest.Cluster {
	t.Helper()
	return zktest.Start(t, append([]zktest.Option{zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second)}, opts...)...)
}

// poll waits until cond holds, checking every millisecond: for conditions
// of the client that no event signals (how many requests it holds).
func poll(t testing.TB, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not after %v", what, waitLimit)
		}
		time.Sleep(time.Millisecond)
	}
}

// waitQueued waits until n requests wait for the writer.
func waitQueued(t testing.TB, c *client.Client, n int) {
	t.Helper()
	poll(t, fmt.Sprintf("%d requests queued", n), func() bool { return client.QueueLen(c) >= n })
}

// waitInFlight waits until n requests are in flight.
func waitInFlight(t testing.TB, c *client.Client, n int) {
	t.Helper()
	poll(t, fmt.Sprintf("%d requests in flight", n), func() bool { return client.InFlight(c) >= n })
}
