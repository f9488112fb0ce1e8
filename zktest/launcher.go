package zktest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// Launch starts a throwaway ZooKeeper of n servers (n == 1: standalone) for
// a program or an Example function, which have no *testing.T: a demo, a
// development server. Tests use Start and StartEnsemble instead, which tie
// the servers to the test.
//
// ZooKeeper is found exactly as Start finds it (see the package
// documentation): ZKTEST_SERVERS, then a local installation, then Docker if the
// program imports zktest/docker. When there is none, the error says how to
// install one (scripts/install-deps.sh).
// Every option of Start applies.
//
// The caller must call Close, which stops the servers and removes their
// files; until then the Cluster is used as one from Start. A Cluster from
// ZKTEST_SERVERS is External and its Close does nothing. On Linux the servers
// are also killed if the program dies without calling Close.
//
// Launch returns once every server serves, or with an error when the start
// fails or ctx ends; it then leaves nothing running or on disk, and when ctx
// ended errors.Is(err, ctx.Err()) holds. Without a deadline in ctx the start
// is bounded by WithStartTimeout.
func Launch(ctx context.Context, n int, opts ...Option) (*Cluster, error) {
	c, _, err := launch(ctx, n, opts)
	return c, err
}

// launch is Launch, also returning its launchTB for tests (nil if none).
func launch(ctx context.Context, n int, opts []Option) (*Cluster, *launchTB, error) {
	if n < 1 {
		return nil, nil, fmt.Errorf("zktest: ensemble of %d servers", n)
	}
	if err := ctx.Err(); err != nil {
		return nil, nil, fmt.Errorf("zktest: launch: %w", err)
	}
	lt := newLaunchTB()
	var c *Cluster
	started := make(chan struct{})
	// start reports failure through Fatal, which ends its goroutine the way
	// testing's FailNow does (runtime.Goexit); so it gets a goroutine of its
	// own, and c stays nil when it fails.
	go func() {
		defer close(started)
		c = start(lt, n, opts)
	}()
	aborted := false
	select {
	case <-started:
	case <-ctx.Done():
		// Tearing the servers down makes start fail at once: it stops
		// waiting for a server as soon as its process has died.
		aborted = true
		lt.abort()
		<-started
	}
	if !aborted && c != nil && !lt.Failed() {
		return c, lt, nil
	}
	err := lt.close()
	if aborted {
		return nil, lt, fmt.Errorf("zktest: launch: %w", ctx.Err())
	}
	if err == nil { // cannot happen: start returns a Cluster unless it failed
		err = errors.New("zktest: launch failed")
	}
	return nil, lt, err
}

// Close stops the servers of a Cluster from Launch and removes their files;
// it waits until the servers have exited. It does nothing for an External
// Cluster, and nothing on later calls. A Cluster from Start or
// StartEnsemble is torn down by its test's Cleanup, and its Close returns an
// error without touching it.
func (c *Cluster) Close() error {
	lt, ok := c.t.(*launchTB)
	if !ok {
		return errors.New("zktest: Close is for a Cluster from Launch; the test's Cleanup tears this one down")
	}
	return lt.close()
}

// launchTB is the testing.TB through which Launch drives the machinery of
// Start: Fatal ends the calling goroutine (always one of Launch's own, see
// callIsolated), Errorf records an error that close returns, and logs are
// kept to explain a failure.
type launchTB struct {
	testing.TB // nil; only for the unexported method. Every method is below.

	ctx    context.Context // Context(); cancelled by close
	cancel context.CancelFunc

	mu       sync.Mutex
	cleanups []func()
	errs     []string
	logs     []string
	failed   bool
	dirs     []string // from TempDir, for tests
}

var _ testing.TB = (*launchTB)(nil)

func newLaunchTB() *launchTB {
	lt := &launchTB{}
	lt.ctx, lt.cancel = context.WithCancel(context.Background())
	return lt
}

// abort runs the cleanups registered so far while start may still be
// running, and keeps them: a server that start launches after abort is
// then torn down by close. Teardown is idempotent, so running them twice is
// harmless. A Docker container still being created is not interrupted (its
// creation is bounded by the start timeout), only removed afterwards.
func (lt *launchTB) abort() {
	lt.mu.Lock()
	fs := append([]func(){}, lt.cleanups...)
	lt.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		callIsolated(fs[i])
	}
}

// close runs the cleanups, last registered first as testing does, and
// returns every error reported so far with the logs that explain them.
func (lt *launchTB) close() error {
	lt.cancel()
	lt.mu.Lock()
	fs := lt.cleanups
	lt.cleanups = nil
	lt.mu.Unlock()
	for i := len(fs) - 1; i >= 0; i-- {
		callIsolated(fs[i])
	}
	lt.mu.Lock()
	defer lt.mu.Unlock()
	if len(lt.errs) == 0 {
		return nil
	}
	msg := strings.Join(lt.errs, "\n")
	if len(lt.logs) > 0 {
		msg += "\n" + strings.Join(lt.logs, "\n")
	}
	lt.errs, lt.logs = nil, nil
	return errors.New(msg)
}

// callIsolated runs f in a goroutine of its own and waits for it, so that a
// Fatal inside f ends only that goroutine.
func callIsolated(f func()) {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	<-done
}

func (lt *launchTB) Cleanup(f func()) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.cleanups = append(lt.cleanups, f)
}

func (lt *launchTB) TempDir() string {
	dir, err := os.MkdirTemp("", "zktest-launch-")
	if err != nil {
		lt.Fatalf("zktest: temporary directory: %v", err)
	}
	lt.mu.Lock()
	lt.dirs = append(lt.dirs, dir)
	lt.mu.Unlock()
	lt.Cleanup(func() {
		if err := os.RemoveAll(dir); err != nil {
			lt.Errorf("zktest: remove %s: %v", dir, err)
		}
	})
	return dir
}

func (lt *launchTB) Errorf(format string, args ...any) { lt.fail(fmt.Sprintf(format, args...)) }
func (lt *launchTB) Error(args ...any)                 { lt.fail(fmt.Sprint(args...)) }
func (lt *launchTB) Fatalf(format string, args ...any) { lt.Errorf(format, args...); lt.FailNow() }
func (lt *launchTB) Fatal(args ...any)                 { lt.Error(args...); lt.FailNow() }
func (lt *launchTB) Fail()                             { lt.fail("") }
func (lt *launchTB) FailNow()                          { lt.Fail(); runtime.Goexit() }

func (lt *launchTB) fail(msg string) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.failed = true
	if msg != "" {
		lt.errs = append(lt.errs, msg)
	}
}

func (lt *launchTB) Failed() bool {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	return lt.failed
}

func (lt *launchTB) Logf(format string, args ...any) { lt.Log(fmt.Sprintf(format, args...)) }

func (lt *launchTB) Log(args ...any) {
	lt.mu.Lock()
	defer lt.mu.Unlock()
	lt.logs = append(lt.logs, fmt.Sprint(args...))
}

// A launch cannot be skipped: there is no test to skip.
func (lt *launchTB) Skip(args ...any)                 { lt.Fatal(args...) }
func (lt *launchTB) Skipf(format string, args ...any) { lt.Fatalf(format, args...) }
func (lt *launchTB) SkipNow()                         { lt.Fatal("zktest: SkipNow during Launch") }
func (lt *launchTB) Skipped() bool                    { return false }

// Process-wide changes would outlive the launch; zktest makes none.
func (lt *launchTB) Setenv(key, _ string) { lt.Fatalf("zktest: Setenv(%q) during Launch", key) }
func (lt *launchTB) Chdir(dir string)     { lt.Fatalf("zktest: Chdir(%q) during Launch", dir) }

func (lt *launchTB) Helper()                  {}
func (lt *launchTB) Name() string             { return "zktest.Launch" }
func (lt *launchTB) Attr(string, string)      {}
func (lt *launchTB) ArtifactDir() string      { return lt.TempDir() }
func (lt *launchTB) Context() context.Context { return lt.ctx }
func (lt *launchTB) Output() io.Writer        { return logWriter{lt} }

type logWriter struct{ lt *launchTB }

func (w logWriter) Write(p []byte) (int, error) {
	w.lt.Log(strings.TrimSuffix(string(p), "\n"))
	return len(p), nil
}
