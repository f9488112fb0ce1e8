package interop_test

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// stepTimeout bounds each wait for a driver's next line. It is generous: a
// JVM starting on a loaded two-core machine can take many seconds.
const stepTimeout = 60 * time.Second

// proc is a driver process: a Curator or Kazoo client speaking the line
// protocol of interop/java/Driver.java on its stdin and stdout.
type proc struct {
	name  string
	cmd   *exec.Cmd
	stdin io.WriteCloser
	lines chan string   // stdout, closed at EOF
	exit  chan struct{} // closed once the process has been waited for
	err   error         // Wait's result, set before exit is closed
	errb  syncBuffer    // stderr
}

// syncBuffer is a bytes.Buffer safe for the copying goroutine of exec and
// the test's reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// driverArgs are the key=value arguments every driver takes.
type driverArgs struct {
	connect, path, id, log, mode string
	cycles                       int
	hold                         string // milliseconds
	extra                        []string
}

func (a driverArgs) list() []string {
	l := []string{"connect=" + a.connect, "path=" + a.path, "id=" + a.id, "log=" + a.log,
		"mode=" + a.mode, fmt.Sprintf("cycles=%d", max(a.cycles, 1))}
	if a.hold != "" {
		l = append(l, "hold="+a.hold)
	}
	return append(l, a.extra...)
}

// startCurator starts the Java driver; startKazoo the Python one. Both are
// killed, if still running, when the test ends.
func startCurator(t *testing.T, a driverArgs) *proc {
	t.Helper()
	needCurator(t)
	java, args, err := javaArgs(a.list())
	if err != nil {
		t.Fatal(err)
	}
	return startProc(t, a.id, java, args)
}

func startKazoo(t *testing.T, a driverArgs) *proc {
	t.Helper()
	needKazoo(t)
	return startProc(t, a.id, python, append([]string{filepath.Join("python", "driver.py")}, a.list()...))
}

func startProc(t *testing.T, name, bin string, args []string) *proc {
	t.Helper()
	p := &proc{name: name, cmd: exec.Command(bin, args...), lines: make(chan string, 64), exit: make(chan struct{})}
	p.cmd.Stderr = &p.errb
	stdout, err := p.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if p.stdin, err = p.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start %s: %v", name, err)
	}
	go p.read(stdout)
	t.Cleanup(p.stop)
	return p
}

// stop closes the driver's stdin, which ends an interactive driver, gives
// it a few seconds to exit, then kills it. Unread output is drained so that
// the reading goroutine can finish.
func (p *proc) stop() {
	p.stdin.Close()
	grace := time.NewTimer(5 * time.Second)
	defer grace.Stop()
	for {
		select {
		case _, ok := <-p.lines:
			if !ok {
				<-p.exit
				return
			}
		case <-grace.C:
			p.cmd.Process.Kill()
		}
	}
}

// read forwards stdout lines, then reaps the process (Wait must follow the
// last read of the pipe).
func (p *proc) read(stdout io.Reader) {
	sc := bufio.NewScanner(stdout)
	for sc.Scan() {
		p.lines <- sc.Text()
	}
	close(p.lines)
	p.err = p.cmd.Wait()
	close(p.exit)
}

// expect waits for the driver's next line and fails the test unless it is
// want.
func (p *proc) expect(t *testing.T, want string) {
	t.Helper()
	select {
	case l, ok := <-p.lines:
		if !ok {
			<-p.exit
			t.Fatalf("%s exited (%v) while %q was expected; stderr:\n%s", p.name, p.err, want, p.errb.String())
		}
		if l != want {
			t.Fatalf("%s said %q, %q was expected; stderr:\n%s", p.name, l, want, p.errb.String())
		}
	case <-time.After(stepTimeout):
		t.Fatalf("%s did not say %q within %v; stderr:\n%s", p.name, want, stepTimeout, p.errb.String())
	}
}

// do sends an interactive command and expects its answer.
func (p *proc) do(t *testing.T, cmd, want string) {
	t.Helper()
	p.send(t, cmd)
	p.expect(t, want)
}

// send writes one line to the driver's stdin.
func (p *proc) send(t *testing.T, line string) {
	t.Helper()
	if _, err := io.WriteString(p.stdin, line+"\n"); err != nil {
		t.Fatalf("write to %s: %v; stderr:\n%s", p.name, err, p.errb.String())
	}
}

// finish expects the remaining lines (after held/released pairs have been
// read by the caller, or not) up to "done", then a clean exit. Lines before
// "done" are returned.
func (p *proc) finish(t *testing.T) []string {
	t.Helper()
	var got []string
	deadline := time.After(2 * stepTimeout)
	for {
		select {
		case l, ok := <-p.lines:
			if !ok {
				<-p.exit
				t.Fatalf("%s exited (%v) before done; said %q; stderr:\n%s", p.name, p.err, got, p.errb.String())
			}
			if l != "done" {
				got = append(got, l)
				continue
			}
			select {
			case <-p.exit:
			case <-time.After(stepTimeout):
				t.Fatalf("%s did not exit after done", p.name)
			}
			if p.err != nil {
				t.Fatalf("%s: %v; stderr:\n%s", p.name, p.err, p.errb.String())
			}
			return got
		case <-deadline:
			t.Fatalf("%s not done within %v; said %q; stderr:\n%s", p.name, 2*stepTimeout, got, p.errb.String())
		}
	}
}

// count returns how many of lines start with prefix.
func count(lines []string, prefix string) int {
	n := 0
	for _, l := range lines {
		if strings.HasPrefix(l, prefix) {
			n++
		}
	}
	return n
}

// end closes an interactive driver's stdin and expects "done" and a clean
// exit.
func (p *proc) end(t *testing.T) {
	t.Helper()
	p.stdin.Close()
	if out := p.finish(t); len(out) > 0 {
		t.Errorf("%s said %q before done", p.name, out)
	}
}
