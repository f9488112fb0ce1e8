package chaos

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/zktest"
)

// stopLimit bounds how long a worker may take to release and exit once told
// to stop; then it is killed.
const stopLimit = 30 * time.Second

// Exit records when a worker incarnation ended. A killed incarnation ends
// when SIGKILL was sent: it believes nothing after that.
type Exit struct {
	Proc    string `json:"proc"`
	T       int64  `json:"t"`
	Killed  bool   `json:"killed,omitempty"`
	Err     string `json:"err,omitempty"`     // set when it exited on its own or would not stop
	Stopped bool   `json:"stopped,omitempty"` // it was told to stop
}

// worker is one client process slot: its proxy survives its incarnations.
type worker struct {
	id    int
	lib   string // "" for a zklock worker "w<id>"; LibCurator "c<id>", LibKazoo "k<id>"
	proxy *zktest.Proxy
	mu    sync.Mutex
	inc   int
	cmd   *exec.Cmd
	stdin io.WriteCloser
	done  chan struct{} // closed when the incarnation has exited
}

func (w *worker) proc() string {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.name()
}

// name is proc with w.mu held.
func (w *worker) name() string {
	prefix := map[string]string{"": "w", LibCurator: "c", LibKazoo: "k"}[w.lib]
	return fmt.Sprintf("%s%d.%d", prefix, w.id, w.inc)
}

func (w *worker) pid() int {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cmd.Process.Pid
}

// procs starts and stops the worker processes of a run.
type procs struct {
	exe      string
	peers    map[string][]string // the command that runs a peer library's worker, by library
	dir      string
	env      []string // common worker environment
	broken   string   // Config.Broken: see BrokenFor
	seed     uint64
	session  time.Duration // the workers' session timeout
	mu       sync.Mutex
	exits    []Exit
	logs     []string
	stopping bool // the run is over: workers are being told to stop
}

// start launches w's next incarnation: the coordinator's own executable
// re-run with the worker environment (see IsWorker).
func (p *procs) start(w *worker) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.inc++
	proc := w.name()
	logPath := filepath.Join(p.dir, proc+".jsonl")
	errf, err := os.Create(filepath.Join(p.dir, proc+".out"))
	if err != nil {
		return err
	}
	cmd := exec.Command(p.exe, "-test.run=^$")
	if w.lib != "" {
		pc := p.peers[w.lib]
		cmd = exec.Command(pc[0], pc[1:]...)
	}
	cmd.Env = append(os.Environ(), p.env...)
	if w.lib == "" {
		bugs, err := BrokenFor(p.broken, w.id)
		if err != nil {
			errf.Close()
			return err
		}
		cmd.Env = append(cmd.Env, EnvBroken+"="+bugs)
	}
	cmd.Env = append(cmd.Env, EnvSessionMS+"="+sessionMS(p.session))
	// Under the race detector a worker must not fail by its exit status
	// alone: its output is scanned instead (see Crashes), which names each
	// race by its frames in the report.
	cmd.Env = append(cmd.Env, "GORACE="+os.Getenv("GORACE")+" exitcode=0", EnvProc+"="+proc, EnvLog+"="+logPath,
		EnvAddrs+"="+strings.Join(w.proxy.Addrs(), ","),
		EnvSeed+"="+strconv.FormatUint(p.seed*1000+uint64(w.id*100+w.inc), 10))
	cmd.Stdout, cmd.Stderr = errf, errf
	stdin, err := cmd.StdinPipe()
	if err != nil {
		errf.Close()
		return err
	}
	if err := cmd.Start(); err != nil {
		errf.Close()
		return err
	}
	w.cmd, w.stdin, w.done = cmd, stdin, make(chan struct{})
	p.mu.Lock()
	p.logs = append(p.logs, logPath)
	p.mu.Unlock()
	go p.wait(proc, cmd, errf, w.done)
	return nil
}

func (p *procs) wait(proc string, cmd *exec.Cmd, out *os.File, done chan struct{}) {
	err := cmd.Wait()
	t := Now()
	out.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, e := range p.exits {
		if e.Proc == proc {
			close(done) // killed: its exit was recorded at the kill
			return
		}
	}
	e := Exit{Proc: proc, T: t, Stopped: p.stopping}
	if err != nil {
		e.Err = err.Error()
	}
	p.exits = append(p.exits, e)
	close(done)
}

// kill SIGKILLs w's incarnation and waits until it has exited; why, if
// not empty, says the kill was not a fault but a worker that failed to stop.
func (p *procs) kill(w *worker, why string) {
	w.mu.Lock()
	cmd, done, proc := w.cmd, w.done, w.name()
	w.mu.Unlock()
	p.mu.Lock()
	_ = cmd.Process.Signal(syscall.SIGKILL)
	p.exits = append(p.exits, Exit{Proc: proc, T: Now(), Killed: true, Err: why})
	p.mu.Unlock()
	_ = cmd.Process.Signal(syscall.SIGCONT) // a frozen process dies only once resumed
	<-done
}

// signal sends sig (SIGSTOP, SIGCONT) to w's incarnation.
func (p *procs) signal(w *worker, sig syscall.Signal) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.cmd.Process.Signal(sig)
}

// stop closes w's stdin, which tells it to release and exit, and waits for
// that up to stopLimit, then kills it.
func (p *procs) stop(w *worker) {
	w.mu.Lock()
	stdin, done := w.stdin, w.done
	w.mu.Unlock()
	p.mu.Lock()
	p.stopping = true
	p.mu.Unlock()
	_ = p.signal(w, syscall.SIGCONT)
	stdin.Close()
	t := time.NewTimer(stopLimit)
	defer t.Stop()
	select {
	case <-done:
	case <-t.C:
		p.kill(w, fmt.Sprintf("did not stop within %v of its stdin closing", stopLimit))
	}
}

// results returns the exits and log files so far.
func (p *procs) results() ([]Exit, []string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]Exit(nil), p.exits...), append([]string(nil), p.logs...)
}
