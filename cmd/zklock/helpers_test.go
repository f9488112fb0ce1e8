package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
	"go.uber.org/goleak"
)

// binary is the zklock command under test, built once by TestMain.
var binary string

func TestMain(m *testing.M) {
	if file, ok := os.LookupEnv(sigCountEnv); ok {
		sigCount(file)
		return
	}
	dir, err := os.MkdirTemp("", "zklock-cmd-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "zklock")
	if out, err := exec.Command("go", "build", "-o", binary, ".").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	code := m.Run()
	stopShared()
	// As goleak.VerifyTestMain, once the shared server is gone.
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.RemoveAll(dir)
	os.Exit(code)
}

// sharedZK is the server of shared: started by the first test that asks,
// stopped by TestMain.
var sharedZK struct {
	once sync.Once
	c    *zktest.Cluster
	err  error
}

// shared returns a standalone server that this package's tests share, each
// on its own paths (lockPath), sparing each a JVM's start (0.7s of CPU):
// the commands and sessions of a test only talk to it, and a test cuts
// its own holder off through a proxy of its own. A test that lists
// everything under /zklock-cmd-test, or whose nodes carry an ACL
// (--auth), has a server of its own (zktest.Start).
func shared(t *testing.T) *zktest.Cluster {
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
	return z.c
}

// stopShared stops the shared server if a test started it.
func stopShared() {
	if sharedZK.c != nil {
		if err := sharedZK.c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// sigCountEnv makes the test binary a command that counts signals: run
// with sigCountEnv=FILE, it prints "ready" and writes one line per signal
// it gets to FILE, and exits 0 a second after the last one (3 if none
// comes within a minute). Unlike a shell's trap, it counts two signals
// that come a millisecond apart as two.
const sigCountEnv = "ZKLOCK_TEST_SIGCOUNT"

func sigCount(file string) {
	ch := make(chan os.Signal, 16)
	signal.Notify(ch, syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP, syscall.SIGQUIT)
	f, err := os.OpenFile(file, os.O_WRONLY|os.O_APPEND|os.O_CREATE, 0o644)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	fmt.Println("ready")
	giveUp := time.After(time.Minute)
	var quiet <-chan time.Time
	for {
		select {
		case sig := <-ch:
			fmt.Fprintln(f, sig)
			quiet = time.After(time.Second)
		case <-quiet:
			os.Exit(0)
		case <-giveUp:
			os.Exit(3)
		}
	}
}

// procTimeout bounds every zklock process a test starts.
const procTimeout = 90 * time.Second

// syncBuffer is a bytes.Buffer that can be read while a process writes it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

// ReadFrom copies r into the buffer until r fails.
func (s *syncBuffer) ReadFrom(r io.Reader) (int64, error) {
	buf := make([]byte, 4096)
	var total int64
	for {
		n, err := r.Read(buf)
		s.Write(buf[:n])
		total += int64(n)
		if err != nil {
			return total, err
		}
	}
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// proc is a zklock process started by a test.
type proc struct {
	cmd         *exec.Cmd
	out, errOut syncBuffer
	done        chan struct{}
}

// start runs the zklock binary with args and ZK_SERVERS=servers ("" leaves
// it unset). The process is killed at cleanup if it is still running.
func start(t *testing.T, servers string, args ...string) *proc {
	t.Helper()
	return startEnv(t, envWith(servers), args...)
}

// startEnv runs the zklock binary with args in the environment env.
func startEnv(t *testing.T, env []string, args ...string) *proc {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	p := &proc{cmd: exec.CommandContext(ctx, binary, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	p.cmd.WaitDelay = 10 * time.Second // a grandchild holding the pipes open
	p.cmd.Env = env
	if err := p.cmd.Start(); err != nil {
		cancel()
		t.Fatalf("start zklock %v: %v", args, err)
	}
	go func() {
		defer close(p.done)
		defer cancel()
		_ = p.cmd.Wait()
	}()
	t.Cleanup(func() {
		cancel()
		<-p.done
	})
	return p
}

func envWith(servers string) []string {
	var env []string
	for _, kv := range os.Environ() {
		if !strings.HasPrefix(kv, envServers+"=") {
			env = append(env, kv)
		}
	}
	if servers != "" {
		env = append(env, envServers+"="+servers)
	}
	return env
}

// wait waits for the process to exit, at most d, and returns its exit code
// (-1 if a signal ended zklock itself).
func (p *proc) wait(t *testing.T, d time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
	case <-time.After(d):
		t.Fatalf("zklock %v still running after %v; stderr:\n%s", p.cmd.Args[1:], d, p.errOut.String())
	}
	return p.cmd.ProcessState.ExitCode()
}

func (p *proc) signal(t *testing.T, sig syscall.Signal) {
	t.Helper()
	if err := p.cmd.Process.Signal(sig); err != nil && !errors.Is(err, os.ErrProcessDone) {
		t.Fatalf("signal zklock: %v", err)
	}
}

// runZklock runs the binary to completion and returns its exit code and output.
func runZklock(t *testing.T, servers string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	p := start(t, servers, args...)
	code = p.wait(t, procTimeout)
	return code, p.out.String(), p.errOut.String()
}

// lockPath returns a ZooKeeper path unique to the test.
func lockPath(t *testing.T, name string) string {
	r := strings.NewReplacer("/", "_", " ", "_", "#", "_")
	return "/zklock-cmd-test/" + r.Replace(t.Name()) + "/" + name
}

// eventually polls cond every 50ms until it holds or d passes.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readLines returns the lines of a file the children append to.
func readLines(t *testing.T, path string) []string {
	t.Helper()
	b, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, l := range strings.Split(string(b), "\n") {
		if l = strings.TrimSpace(l); l != "" {
			lines = append(lines, l)
		}
	}
	return lines
}

// stamped is a line "WHAT ID NANOS" written by a child with date +%s%N.
type stamped struct {
	what, id string
	at       int64
}

func parseStamped(t *testing.T, lines []string) []stamped {
	t.Helper()
	out := make([]stamped, 0, len(lines))
	for _, l := range lines {
		var s stamped
		if _, err := fmt.Sscan(l, &s.what, &s.id, &s.at); err != nil {
			t.Fatalf("line %q: %v", l, err)
		}
		out = append(out, s)
	}
	return out
}

// statusOf runs 'zklock status --json' on path.
func statusOf(t *testing.T, servers, path string) report {
	t.Helper()
	code, out, errOut := runZklock(t, servers, "status", "--json", path)
	if code != 0 {
		t.Fatalf("status %s: exit %d: %s", path, code, errOut)
	}
	var r report
	if err := json.Unmarshal([]byte(out), &r); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return r
}

// awaitQueue waits until path has the given numbers of holders and waiters.
func awaitQueue(t *testing.T, servers, path string, holders, waiting int) report {
	t.Helper()
	var r report
	eventually(t, 30*time.Second, fmt.Sprintf("%s: %d holding, %d waiting", path, holders, waiting), func() bool {
		r = statusOf(t, servers, path)
		return len(r.Holders) == holders && len(r.Waiting) == waiting
	})
	return r
}
