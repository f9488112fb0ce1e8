//go:build linux

package main

import (
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/zklock/zklock/zktest"
)

// These tests cut a holder off from ZooKeeper (its connection goes through
// a proxy the test freezes) while a rival 'zklock run' waits on the same
// path straight to the server, and check that no process of the holder's
// command still runs when the rival's command starts (rivalScript looks in
// /proc). Each logs the gap between the holder's command's last process
// ending (from pidfds) and the rival's start.

// treeScript leaves, besides the shell itself ($0 is the pid file): a
// background child, an orphan (its parent, a subshell, exits at once) and
// a daemon that left the process group and the session with setsid. The
// shell then waits for its children; SIGTERM ends it.
const treeScript = `P=$0
echo $$ >> "$P"
sleep 300 & echo $! >> "$P"
(sleep 300 & echo $! >> "$P")
setsid sh -c 'echo $$ >> "$0"; exec sleep 300' "$P" &
wait`

// cutHolder starts 'zklock run' on path through a new proxy with a 2s
// session, running sh -c script with $0 the returned pid file; it waits
// for n pids in that file, watches them, and queues a rival behind it.
func cutHolder(t *testing.T, c *zktest.Cluster, path, script string, n int, flags ...string) (*proc, *zktest.Proxy, *exitWatch, *rival) {
	t.Helper()
	p := zktest.NewProxy(t, c.Servers())
	pidFile := filepath.Join(t.TempDir(), "pids")
	args := append([]string{"run", "--servers", strings.Join(p.Addrs(), ","), "--session-timeout", "2s"}, flags...)
	first := start(t, "", append(args, path, "--", "sh", "-c", script, pidFile)...)
	w := watchExits(t, readPids(t, pidFile, n))
	r := startRival(t, c.ConnectString(), path, pidFile)
	awaitQueue(t, c.ConnectString(), path, 1, 1)
	return first, p, w, r
}

// Issue 35, item 1: SIGTERM and SIGKILL reach every process of the
// command, not only the one zklock started.
func TestRunLossStopsEveryProcessOfTheCommand(t *testing.T) {
	c := shared(t)
	first, p, w, r := cutHolder(t, c, lockPath(t, "lock"), treeScript, 4)
	p.Blackhole()
	r.check(t, w)
	if code := first.wait(t, procTimeout); code != exitLost {
		t.Errorf("cut-off zklock: exit %d, want %d; stderr: %s", code, exitLost, first.errOut.String())
	}
	t.Logf("cut-off zklock's stderr:\n%s", first.errOut.String())
}

// Issue 35, item 1: like flock(1), the lock is held until no process of
// the command is left, here a background child of a shell that exited.
func TestRunHoldsTheLockUntilEveryProcessEnds(t *testing.T) {
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	pidFile := filepath.Join(t.TempDir(), "pids")
	first := start(t, servers, "run", path, "--", "sh", "-c", `sleep 2 & echo $! >> "$0"`, pidFile)
	w := watchExits(t, readPids(t, pidFile, 1))
	r := startRival(t, servers, path, pidFile)
	r.check(t, w)
	if code := first.wait(t, procTimeout); code != 0 {
		t.Errorf("first zklock: exit %d, want 0; stderr: %s", code, first.errOut.String())
	}
}

// Issue 35, item 2: a zklock killed with SIGKILL takes its command, and
// everything the command started, with it.
func TestRunKilledZklockTakesItsCommandWithIt(t *testing.T) {
	c := shared(t)
	first, p, w, r := cutHolder(t, c, lockPath(t, "lock"), treeScript, 4)
	p.Blackhole()
	first.signal(t, syscall.SIGKILL)
	r.check(t, w)
	first.wait(t, procTimeout)
}

// Issue 35, item 3: with stderr a pipe nobody reads any more, the warning
// zklock writes on loss must not stop it from signalling the command.
func TestRunLossWithStderrAClosedPipe(t *testing.T) {
	c := shared(t)
	p := zktest.NewProxy(t, c.Servers())
	path, pidFile := lockPath(t, "lock"), filepath.Join(t.TempDir(), "pids")
	first := startWithStderr(t, brokenPipe(t), "run", "--servers", strings.Join(p.Addrs(), ","),
		"--session-timeout", "2s", path, "--", "sh", "-c", `echo $$ >> "$0"; exec sleep 300`, pidFile)
	w := watchExits(t, readPids(t, pidFile, 1))
	r := startRival(t, c.ConnectString(), path, pidFile)
	awaitQueue(t, c.ConnectString(), path, 1, 1)
	p.Blackhole()
	r.check(t, w)
	if code := first.wait(t, procTimeout); code != exitLost {
		t.Errorf("cut-off zklock with a broken stderr: exit %d, want %d", code, exitLost)
	}
}

// Issue 35, item 3: with stderr a full pipe nobody reads (the command
// filled it), a write to it blocks; zklock must still send SIGTERM, and
// SIGKILL at the end of the grace period to a command that ignores SIGTERM.
func TestRunLossWithStderrAFullPipe(t *testing.T) {
	c := shared(t)
	p := zktest.NewProxy(t, c.Servers())
	path, pidFile := lockPath(t, "lock"), filepath.Join(t.TempDir(), "pids")
	pr, pw, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pr.Close(); pw.Close() })
	first := startWithStderr(t, pw, "run", "--servers", strings.Join(p.Addrs(), ","),
		"--session-timeout", "2s", path, "--", "sh", "-c",
		`trap '' TERM; echo $$ >> "$0"; head -c 1000000 /dev/zero >&2; while :; do sleep 0.05; done`, pidFile)
	w := watchExits(t, readPids(t, pidFile, 1))
	r := startRival(t, c.ConnectString(), path, pidFile)
	awaitQueue(t, c.ConnectString(), path, 1, 1)
	p.Blackhole()
	r.check(t, w)
	if code := first.wait(t, procTimeout); code != exitLost {
		t.Errorf("cut-off zklock with a full stderr: exit %d, want %d", code, exitLost)
	}
}

// Issue 35, item 4: by default, a command that ignores SIGTERM is killed
// before a rival can be granted the lock.
func TestRunLossDefaultGraceEndsBeforeRival(t *testing.T) {
	c := shared(t)
	first, p, w, r := cutHolder(t, c, lockPath(t, "lock"),
		`trap '' TERM; echo $$ >> "$0"; while :; do sleep 0.05; done`, 1)
	p.Blackhole()
	r.check(t, w)
	if code := first.wait(t, procTimeout); code != exitLost {
		t.Errorf("cut-off zklock: exit %d, want %d; stderr: %s", code, exitLost, first.errOut.String())
	}
	t.Logf("cut-off zklock's stderr:\n%s", first.errOut.String())
}

// Issue 35, item 4: a --grace that does not end before the session's
// safety margin is refused, with the numbers: against the requested
// session timeout before connecting, and against the negotiated one after
// (zktest's servers grant at most 2s, so a margin of 400ms).
func TestRunRefusesGraceBeyondMargin(t *testing.T) {
	c := shared(t)
	for _, tc := range []struct {
		args []string
		want string // in the message
	}{
		{[]string{"run", "--session-timeout", "10s", "--grace", "3s"}, "2s"},
		{[]string{"run", "--session-timeout", "10s", "--grace", "1s"}, "400ms"},
		{[]string{"elect", "--session-timeout", "10s", "--grace", "1s"}, "400ms"},
	} {
		args := append(tc.args, lockPath(t, "lock"))
		if tc.args[0] == "elect" {
			args = append(args, "value")
		}
		code, _, errOut := runZklock(t, c.ConnectString(), append(args, "--", "true")...)
		if code != exitUsage || !strings.Contains(errOut, tc.want) || !strings.Contains(errOut, "--grace") {
			t.Errorf("%v: exit %d, want %d and a message with %s; stderr: %q", tc.args, code, exitUsage, tc.want, errOut)
		}
	}
}

// If the supervisor between zklock and the command is killed, the command
// gets SIGKILL from the kernel (parent-death signal), its orphans come back
// to zklock, which kills them, and zklock exits 125 once none is left.
func TestRunSupervisorKilled(t *testing.T) {
	c := shared(t)
	pidFile := filepath.Join(t.TempDir(), "pids")
	first := start(t, c.ConnectString(), "run", lockPath(t, "lock"), "--", "sh", "-c", treeScript, pidFile)
	w := watchExits(t, readPids(t, pidFile, 4))
	sup := childrenOf(t, first.cmd.Process.Pid)
	if len(sup) != 1 {
		t.Fatalf("zklock has children %v, want its supervisor alone", sup)
	}
	if err := syscall.Kill(sup[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	if code := first.wait(t, procTimeout); code != exitError {
		t.Errorf("zklock: exit %d, want %d; stderr: %s", code, exitError, first.errOut.String())
	}
	if pids := w.running(); len(pids) > 0 {
		t.Errorf("processes of the command outlived zklock: %v", pids)
	}
}

// childrenOf lists the children of pid, from /proc.
func childrenOf(t *testing.T, pid int) []int {
	t.Helper()
	var kids []int
	for p, pi := range readProcs() {
		if pi.ppid == pid {
			kids = append(kids, p)
		}
	}
	return kids
}
