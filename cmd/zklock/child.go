package main

import (
	"errors"
	"os"
	"os/exec"
	"syscall"
	"time"
)

// supervise runs the command while g is held and returns the exit code:
// the command's own, or exitLost if the lock was lost while it ran.
//
// Signals that zklock receives are passed on to the command, except those
// the terminal has already sent it (see fromTerminal). When the loss
// signal fires, the command gets SIGTERM at once and SIGKILL after the grace
// period: the loss signal fires before the servers can expire the session
// and grant the lock to someone else, so a command that stops on SIGTERM
// within the margin stops before another holder starts.
func (j *job) supervise(g grant, sigs <-chan os.Signal) int {
	cmd := exec.Command(j.argv[0], j.argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, j.stdout, j.stderr
	cmd.Env = append(os.Environ(), j.env(g)...)
	if err := cmd.Start(); err != nil {
		return j.startFailed(err)
	}
	exited := make(chan struct{})
	go func() {
		_ = cmd.Wait() // the exit status is in cmd.ProcessState
		close(exited)
	}()
	lost, kill := g.lost, (<-chan time.Time)(nil)
	for {
		select {
		case <-exited:
			if lost == nil {
				j.warnf("%s was lost while the command ran; exiting %d", j.path, exitLost)
				return exitLost
			}
			return exitStatus(cmd.ProcessState)
		case sig := <-sigs:
			if !fromTerminal(sig) {
				_ = cmd.Process.Signal(sig)
			}
		case <-lost:
			lost = nil
			j.warnf("lost %s (the session may have expired); sending SIGTERM to the command, SIGKILL in %v",
				j.path, j.grace)
			_ = cmd.Process.Signal(syscall.SIGTERM)
			t := time.NewTimer(j.grace)
			defer t.Stop()
			kill = t.C
		case <-kill:
			kill = nil
			j.warnf("the command outlived the %v grace period; sending SIGKILL", j.grace)
			_ = cmd.Process.Kill()
		}
	}
}

// startFailed reports a command that did not start, with the shell's codes.
func (j *job) startFailed(err error) int {
	if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
		return j.failf(exitNotFound, "", "command not found: %v", err)
	}
	return j.failf(exitNoExec, "", "cannot run the command: %v", err)
}

// exitStatus is the command's exit code, or 128+N if signal N killed it,
// as a shell reports it.
func exitStatus(ps *os.ProcessState) int {
	if ws, ok := ps.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		return exitSignal + int(ws.Signal())
	}
	return ps.ExitCode()
}
