package zktest

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"time"
)

// stopGrace is how long a server gets to exit after SIGTERM before SIGKILL;
// reapTimeout bounds the wait for the kernel to report a killed JVM gone.
const (
	stopGrace   = 20 * time.Second
	reapTimeout = 20 * time.Second
	stopWait    = 5 * time.Second // for every thread to stop after SIGSTOP
)

// control runs one server: a local JVM, a container, or nothing (external).
type control interface {
	launch() error   // start the server without waiting for it to serve
	stop() error     // graceful stop, waits for the exit
	kill() error     // abrupt stop, waits for the exit
	teardown() error // release everything at the end of the test
	pause() error
	resume() error
	running() bool
	// exited reports whether a launched server has died by itself, and why.
	exited() (bool, string)
	logTail(lines int) string
	// keep copies what the server wrote to disk into dir, if it has any.
	keep(dir string) error
}

// process runs a server as a local JVM whose output goes to node.logPath.
type process struct {
	in       *install
	opts     options
	n        *node
	ensemble bool

	mu     sync.Mutex
	cmd    *exec.Cmd
	done   chan struct{} // closed once cmd has been reaped
	status string        // how cmd exited, set before done closes
	paused bool
	starts int
}

var _ control = (*process)(nil)

func (p *process) launch() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd != nil && !isClosed(p.done) {
		return errors.New("zktest: server is already running")
	}
	f, err := os.OpenFile(p.n.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	// The child gets its own copy of the descriptor, so ours can go at once.
	defer f.Close()
	p.starts++
	fmt.Fprintf(f, "=== zktest: start #%d of server %d at %s (%s)\n",
		p.starts, p.n.id, time.Now().Format("15:04:05.000"), p.in.where)
	cmd := exec.Command(p.in.java, javaArgs(p.in, p.opts, p.n, p.ensemble)...)
	cmd.Dir = p.n.dir
	cmd.Stdout, cmd.Stderr = f, f
	cmd.SysProcAttr = sysProcAttr()
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("zktest: start java: %w", err)
	}
	done := make(chan struct{})
	p.cmd, p.done, p.paused, p.status = cmd, done, false, ""
	go func() {
		err := cmd.Wait()
		p.mu.Lock()
		p.status = fmt.Sprint(err)
		if err == nil {
			p.status = "exit status 0"
		}
		p.mu.Unlock()
		close(done)
	}()
	return nil
}

// current returns the running command and its done channel, or nil.
func (p *process) current() (*exec.Cmd, chan struct{}, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || isClosed(p.done) {
		return nil, nil, false
	}
	return p.cmd, p.done, p.paused
}

func (p *process) stop() error {
	cmd, done, paused := p.current()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Signal(sigTerm); err != nil {
		return fmt.Errorf("zktest: SIGTERM: %w", err)
	}
	if paused {
		// A stopped process only acts on SIGTERM once it runs again.
		_ = p.resume()
	}
	select {
	case <-done:
		return nil
	case <-time.After(stopGrace):
		return p.kill()
	}
}

func (p *process) kill() error {
	cmd, done, _ := p.current()
	if cmd == nil {
		return nil
	}
	if err := cmd.Process.Kill(); err != nil && !isClosed(done) {
		return fmt.Errorf("zktest: SIGKILL: %w", err)
	}
	select {
	case <-done:
		return nil
	case <-time.After(reapTimeout):
		return fmt.Errorf("zktest: server pid %d did not exit within %v of SIGKILL", cmd.Process.Pid, reapTimeout)
	}
}

func (p *process) teardown() error { return p.kill() }

func (p *process) pause() error  { return p.signalPause(true) }
func (p *process) resume() error { return p.signalPause(false) }

func (p *process) signalPause(pause bool) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || isClosed(p.done) {
		return errors.New("zktest: server is not running")
	}
	sig := sigCont
	if pause {
		sig = sigStop
	}
	if sig == nil {
		return errors.New("zktest: pause and resume need a Unix system")
	}
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("zktest: signal %v: %w", sig, err)
	}
	p.paused = pause
	if pause {
		return waitStopped(p.cmd.Process.Pid, stopWait)
	}
	return nil
}

func (p *process) running() bool {
	cmd, _, _ := p.current()
	return cmd != nil
}

func (p *process) exited() (bool, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil || !isClosed(p.done) {
		return false, ""
	}
	return true, p.status
}

func (p *process) logTail(lines int) string { return tailFile(p.n.logPath(), lines) }

func (p *process) keep(dir string) error {
	return os.CopyFS(filepath.Join(dir, filepath.Base(p.n.dir)), os.DirFS(p.n.dir))
}

func isClosed(ch chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// tailFile returns at most the last n lines of the file at path, reading at
// most its last 256 KiB.
func tailFile(path string, n int) string {
	f, err := os.Open(path)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer f.Close()
	const window = 256 << 10
	st, err := f.Stat()
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	off := max(st.Size()-window, 0)
	buf := make([]byte, st.Size()-off)
	k, _ := f.ReadAt(buf, off)
	return lastLines(string(buf[:k]), n)
}
