//go:build linux

package main

// Tests of the supervisor on its own: the adversarial review of issue 35's
// fix found that a zklock stopped alone left its command running past the
// lock, and that a name matching both zklock and its supervisor let one
// 'pkill -9 zklock' kill both and leave the command's orphans running.

import (
	"bytes"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// killLeft SIGKILLs the processes of the first command that still run, at
// cleanup: a failing test must not leave them behind.
func killLeft(t *testing.T, w *exitWatch) {
	t.Cleanup(func() {
		for _, pid := range w.running() {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
}

// zklock alone is stopped (SIGSTOP from an operator or a debugger, a frozen
// cgroup): it neither renews its session nor fires its loss signal. The
// supervisor, which is not stopped, has the ownership deadline and ends the
// command before the next holder starts; zklock, continued, exits 123.
func TestRunZklockStoppedAloneLosesTheCommand(t *testing.T) {
	c := shared(t)
	first, _, w, r := cutHolder(t, c, lockPath(t, "lock"), `echo $$ >> "$0"; exec sleep 300`, 1)
	killLeft(t, w)
	t.Cleanup(func() { _ = first.cmd.Process.Signal(syscall.SIGCONT) })
	first.signal(t, syscall.SIGSTOP)
	r.check(t, w)
	first.signal(t, syscall.SIGCONT)
	if code := first.wait(t, procTimeout); code != exitLost {
		t.Errorf("zklock, continued: exit %d, want %d; stderr: %s", code, exitLost, first.errOut.String())
	}
	if !strings.Contains(first.errOut.String(), "passed while zklock did not run") {
		t.Errorf("zklock's stderr does not say that its supervisor ended the command:\n%s", first.errOut.String())
	}
}

// 'pkill -9 zklock', 'killall -9 zklock' and 'pidof zklock' find zklock and
// not its supervisor (they match the kernel's name of a process, or its
// argv[0]); zklock killed that way, the supervisor kills the whole command.
// The test does not run pkill, which would hit every zklock on the machine:
// it asks pgrep and pidof, which match as pkill and killall do.
func TestRunPkillZklockSparesTheSupervisor(t *testing.T) {
	c := shared(t)
	first, _, w, r := cutHolder(t, c, lockPath(t, "lock"), treeScript, 4)
	killLeft(t, w)
	sup := childrenOf(t, first.cmd.Process.Pid)
	if len(sup) != 1 {
		t.Fatalf("zklock has children %v, want its supervisor alone", sup)
	}
	comm, err := os.ReadFile("/proc/" + strconv.Itoa(sup[0]) + "/comm")
	if err != nil || string(bytes.TrimSpace(comm)) != supervisorName {
		t.Errorf("the supervisor's name is %q (%v), want %q", comm, err, supervisorName)
	}
	for _, finder := range [][]string{{"pgrep", "zklock"}, {"pidof", "zklock"}} {
		out, _ := exec.Command(finder[0], finder[1:]...).Output() // exit 1: none found
		found := map[int]bool{}
		for _, f := range strings.Fields(string(out)) {
			pid, _ := strconv.Atoi(f)
			found[pid] = true
		}
		if !found[first.cmd.Process.Pid] || found[sup[0]] {
			t.Errorf("%v found %q: want zklock %d, not its supervisor %d", finder, out, first.cmd.Process.Pid, sup[0])
		}
	}
	first.signal(t, syscall.SIGKILL) // what pkill -9 zklock does to it
	r.check(t, w)
	first.wait(t, procTimeout)
}

// The documented limit (docs/cli.md, "The command dies with zklock"): if
// zklock and its supervisor are both killed at once (kill -9 of both pids,
// a pattern that matches both with pkill -f), the command itself dies (its
// parent-death signal), but the processes it started are re-parented above
// zklock and run on (some may be killed, by whichever of the two dies
// last, if it runs long enough after the other's death). The test pins that, so that the documentation changes
// with it.
func TestRunZklockAndSupervisorKilledLeaveOrphans(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	pidFile := t.TempDir() + "/pids"
	first := start(t, servers, "run", path, "--", "sh", "-c", treeScript, pidFile)
	pids := readPids(t, pidFile, 4)
	w := watchExits(t, pids)
	killLeft(t, w)
	sup := childrenOf(t, first.cmd.Process.Pid)
	if len(sup) != 1 {
		t.Fatalf("zklock has children %v, want its supervisor alone", sup)
	}
	// Both stopped first, so that neither acts on the other's death (a
	// zklock that outlives its supervisor kills the orphans it adopts): the
	// worst case of two kills that come at once.
	first.signal(t, syscall.SIGSTOP)
	for _, sig := range []syscall.Signal{syscall.SIGSTOP, syscall.SIGKILL} {
		if err := syscall.Kill(sup[0], sig); err != nil {
			t.Fatal(err)
		}
	}
	first.signal(t, syscall.SIGKILL)
	first.wait(t, procTimeout)
	shell := pids[0]
	eventually(t, 10*time.Second, "the command (the shell) ended by its parent-death signal", func() bool {
		for _, p := range w.running() {
			if p == shell {
				return false
			}
		}
		return true
	})
	if left := w.running(); len(left) != 3 {
		t.Errorf("processes of the command's left running: %v, want the 3 it started (the documented limit)", left)
	}
}

// Ctrl-Z stops the command and zklock together; stopped longer than the
// ownership deadline allows, the job loses the lock: the supervisor ends
// the command (SIGTERM with SIGCONT, then SIGKILL) while the job is still
// stopped, and the shell's fg finds zklock exiting 123.
func TestTerminalCtrlZPastTheDeadlineEndsTheCommand(t *testing.T) {
	c := shared(t)
	pidFile := t.TempDir() + "/pids"
	cmd, master, out := startOnTerminal(t, c.ConnectString(), "run", "--session-timeout", "2s", lockPath(t, "lock"),
		"--", "sh", "-c", `echo $$ >> "$0"; echo started; exec sleep 300`, pidFile)
	w := watchExits(t, readPids(t, pidFile, 1))
	killLeft(t, w)
	eventually(t, 30*time.Second, "the command to start", func() bool { return strings.Contains(out.String(), "started") })
	if _, err := master.Write([]byte{0x1a}); err != nil { // Ctrl-Z
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "zklock to stop", func() bool { return procState(t, cmd.Process.Pid) == "T" })
	eventually(t, 30*time.Second, "the stopped command to be ended", func() bool { return len(w.running()) == 0 })
	if st := procState(t, cmd.Process.Pid); st != "T" {
		t.Errorf("zklock's state %q while the command was ended, want still stopped (T)", st)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT); err != nil { // fg
		t.Fatal(err)
	}
	err := cmd.Wait()
	if code := cmd.ProcessState.ExitCode(); code != exitLost {
		t.Errorf("zklock, continued: %v, want exit %d; output: %q", err, exitLost, out.String())
	}
	eventually(t, 10*time.Second, "zklock's report that its supervisor ended the command", func() bool {
		return strings.Contains(out.String(), "passed while zklock did not run")
	})
}
