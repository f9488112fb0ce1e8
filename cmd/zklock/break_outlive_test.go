//go:build linux && openholes

package main

// Open holes, run by make open-holes and kept out of make test until
// closed: adversarial tests of issue 35's fix ('zklock run' command
// outliving its lock). Each test named TestBreak… encodes an attack that
// still succeeds; docs/cli.md states the limits.

import (
	"syscall"
	"testing"

	"github.com/zklock/zklock/zktest"
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

// TestBreakRunZklockAndSupervisorKilled: zklock and its supervisor are
// both killed at once, as 'pkill -9 zklock' or 'killall -9 zklock' does
// (the supervisor is zklock's own binary, so the name matches both). The
// command gets its parent-death signal, but the processes it started have
// no living subreaper above them any more: they are re-parented to init
// and run on, while the session expires and the next holder starts.
func TestBreakRunZklockAndSupervisorKilled(t *testing.T) {
	c := zktest.Start(t)
	first, _, w, r := cutHolder(t, c, lockPath(t, "lock"), treeScript, 4)
	killLeft(t, w)
	sup := childrenOf(t, first.cmd.Process.Pid)
	if len(sup) != 1 {
		t.Fatalf("zklock has children %v, want its supervisor alone", sup)
	}
	if err := syscall.Kill(sup[0], syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	first.signal(t, syscall.SIGKILL)
	r.check(t, w)
	first.wait(t, procTimeout)
}

// TestBreakRunZklockStopped: zklock alone is stopped (SIGSTOP from an
// operator or a debugger, a frozen cgroup, a VM vCPU starved): its
// session expires, the next holder starts, and the supervisor, which is
// not stopped, lets the command run on: nothing tells it that the lock
// is gone.
func TestBreakRunZklockStopped(t *testing.T) {
	c := zktest.Start(t)
	first, _, w, r := cutHolder(t, c, lockPath(t, "lock"), `echo $$ >> "$0"; exec sleep 300`, 1)
	killLeft(t, w)
	t.Cleanup(func() { _ = first.cmd.Process.Signal(syscall.SIGCONT) })
	first.signal(t, syscall.SIGSTOP)
	r.check(t, w)
	first.signal(t, syscall.SIGCONT)
	t.Logf("zklock, continued, exited %d", first.wait(t, procTimeout))
}
