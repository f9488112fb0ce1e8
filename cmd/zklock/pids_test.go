//go:build linux

package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"
)

// exitWatch records when each of a set of processes ends, from pidfds, so
// that a test can tell when the last process of a command ended without
// being its parent. At cleanup it SIGKILLs, through the same pidfds, the
// processes still running: those a broken zklock left behind.
type exitWatch struct {
	mu    sync.Mutex
	ended map[int]time.Time
	fds   map[int]int // pid -> pidfd
	quit  int         // eventfd that stops the poller
	done  chan struct{}
}

// watchExits opens a pidfd for each pid; a pid already gone fails the test
// (it would have ended before it could be watched).
func watchExits(t *testing.T, pids []int) *exitWatch {
	t.Helper()
	w := &exitWatch{ended: map[int]time.Time{}, fds: map[int]int{}, done: make(chan struct{})}
	for _, pid := range pids {
		fd, err := unix.PidfdOpen(pid, 0)
		if err != nil {
			w.closeFds()
			t.Fatalf("pidfd_open %d: %v (the process ended before it was watched)", pid, err)
		}
		w.fds[pid] = fd
	}
	quit, err := unix.Eventfd(0, unix.EFD_CLOEXEC)
	if err != nil {
		w.closeFds()
		t.Fatal(err)
	}
	w.quit = quit
	go w.poll()
	t.Cleanup(w.stop)
	return w
}

func (w *exitWatch) poll() {
	defer close(w.done)
	for {
		var pfds []unix.PollFd
		var pids []int
		w.mu.Lock()
		for pid, fd := range w.fds {
			if _, ok := w.ended[pid]; !ok {
				pfds, pids = append(pfds, unix.PollFd{Fd: int32(fd), Events: unix.POLLIN}), append(pids, pid)
			}
		}
		w.mu.Unlock()
		pfds = append(pfds, unix.PollFd{Fd: int32(w.quit), Events: unix.POLLIN})
		if _, err := unix.Poll(pfds, -1); err != nil && !errors.Is(err, unix.EINTR) {
			return
		}
		now := time.Now()
		if pfds[len(pfds)-1].Revents != 0 {
			return
		}
		w.mu.Lock()
		for i, p := range pfds[:len(pids)] {
			if p.Revents != 0 {
				w.ended[pids[i]] = now
			}
		}
		w.mu.Unlock()
	}
}

// stop kills what still runs, stops the poller and closes the pidfds.
func (w *exitWatch) stop() {
	w.mu.Lock()
	for pid, fd := range w.fds {
		if _, ok := w.ended[pid]; !ok {
			_ = unix.PidfdSendSignal(fd, unix.SIGKILL, nil, 0)
		}
	}
	w.mu.Unlock()
	_, _ = unix.Write(w.quit, []byte{1, 0, 0, 0, 0, 0, 0, 0})
	<-w.done
	unix.Close(w.quit)
	w.closeFds()
}

func (w *exitWatch) closeFds() {
	for _, fd := range w.fds {
		unix.Close(fd)
	}
}

// lastEnd returns when the last watched process ended, and false if one
// still runs.
func (w *exitWatch) lastEnd() (time.Time, bool) {
	w.mu.Lock()
	defer w.mu.Unlock()
	var last time.Time
	for pid := range w.fds {
		at, ok := w.ended[pid]
		if !ok {
			return time.Time{}, false
		}
		if at.After(last) {
			last = at
		}
	}
	return last, true
}

// running returns the watched processes that still exist, asking the
// kernel now (signal 0 through a pidfd fails with ESRCH once its process
// has been reaped; a zombie counts as existing) rather than the poller,
// which may lag.
func (w *exitWatch) running() []int {
	w.mu.Lock()
	defer w.mu.Unlock()
	var pids []int
	for pid, fd := range w.fds {
		if err := unix.PidfdSendSignal(fd, 0, nil, 0); !errors.Is(err, unix.ESRCH) {
			pids = append(pids, pid)
		}
	}
	return pids
}

// readPids waits until file lists n pids, one per line, and returns them.
func readPids(t *testing.T, file string, n int) []int {
	t.Helper()
	var pids []int
	eventually(t, 30*time.Second, strconv.Itoa(n)+" pids in "+file, func() bool {
		lines := readLines(t, file)
		if len(lines) < n {
			return false
		}
		pids = pids[:0]
		for _, l := range lines {
			pid, err := strconv.Atoi(l)
			if err != nil {
				t.Fatalf("pid line %q: %v", l, err)
			}
			pids = append(pids, pid)
		}
		return true
	})
	if len(pids) != n {
		t.Fatalf("%s lists %d pids, want %d: %v", file, len(pids), n, pids)
	}
	return pids
}

// rivalScript is the second holder's command: it writes "start NANOS" to
// $0, then "alive PID STATE" for each pid listed in $1 that is still a
// running process (a zombie has ended), read from /proc when it starts.
const rivalScript = `echo start $(date +%s%N) >> "$0"
for p in $(cat "$1"); do
	s=$(sed -n 's/^State:[[:space:]]*\(.\).*/\1/p' /proc/$p/status 2>/dev/null)
	if [ -n "$s" ] && [ "$s" != Z ]; then echo alive $p $s >> "$0"; fi
done`

// rival queues a 'zklock run' on path, straight to the server, whose
// command runs rivalScript over the pids in pidFile.
type rival struct {
	p   *proc
	log string
}

func startRival(t *testing.T, servers, path, pidFile string) *rival {
	t.Helper()
	log := filepath.Join(t.TempDir(), "rival")
	p := start(t, servers, "run", path, "--", "sh", "-c", rivalScript, log, pidFile)
	return &rival{p: p, log: log}
}

// check waits for the rival to finish and fails the test if a process of
// the first command still ran when the rival's command started. It logs
// the gap between the first command's last process ending and that start.
func (r *rival) check(t *testing.T, w *exitWatch) {
	t.Helper()
	if code := r.p.wait(t, procTimeout); code != 0 {
		t.Fatalf("rival zklock: exit %d; stderr: %s", code, r.p.errOut.String())
	}
	var started time.Time
	var alive []string
	for _, l := range readLines(t, r.log) {
		f := strings.Fields(l)
		switch {
		case len(f) == 2 && f[0] == "start":
			ns, err := strconv.ParseInt(f[1], 10, 64)
			if err != nil {
				t.Fatalf("rival line %q: %v", l, err)
			}
			started = time.Unix(0, ns)
		case len(f) == 3 && f[0] == "alive":
			alive = append(alive, f[1]+" (state "+f[2]+")")
		default:
			t.Fatalf("rival line %q", l)
		}
	}
	if started.IsZero() {
		t.Fatalf("the rival's command did not start")
	}
	if len(alive) > 0 {
		t.Errorf("when the next holder's command started, processes of the first command still ran: %s",
			strings.Join(alive, ", "))
	}
	if last, ok := w.lastEnd(); ok {
		t.Logf("gap: the first command's last process ended %v before the next holder's command started",
			started.Sub(last).Round(time.Millisecond))
	} else {
		t.Logf("a process of the first command still runs after the next holder's command started")
	}
}

// brokenPipe returns the write end of a pipe whose read end is closed: a
// write to it fails with EPIPE (or raises SIGPIPE).
func brokenPipe(t *testing.T) *os.File {
	t.Helper()
	r, w, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	r.Close()
	t.Cleanup(func() { w.Close() })
	return w
}

// startWithStderr is start with zklock's stderr the given file instead of
// a buffer.
func startWithStderr(t *testing.T, stderr *os.File, args ...string) *proc {
	t.Helper()
	p := &proc{cmd: exec.Command(binary, args...), done: make(chan struct{})}
	p.cmd.Stdout, p.cmd.Stderr = &p.out, stderr
	p.cmd.WaitDelay = 10 * time.Second // a process left behind holding stdout
	p.cmd.Env = envWith("")
	if err := p.cmd.Start(); err != nil {
		t.Fatalf("start zklock %v: %v", args, err)
	}
	go func() {
		defer close(p.done)
		_ = p.cmd.Wait()
	}()
	t.Cleanup(func() {
		_ = p.cmd.Process.Kill()
		<-p.done
	})
	return p
}
