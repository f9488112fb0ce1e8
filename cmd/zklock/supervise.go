package main

import (
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock"
)

// supervise runs the command while g is held and returns the exit code:
// the command's own, or exitLost if the lock was lost while any process of
// the command's ran. It returns only when no process of the command's is
// left (see command), so the lock is released only then.
//
// Every signal zklock receives is passed on to the command's process group
// and to the processes of the command's that left it. When the loss signal
// fires, they get SIGTERM at once, and SIGKILL when the grace period ends,
// which is before the servers can expire the session and grant the lock to
// someone else (see checkGrace). zklock signals first and reports after, and
// its reports never block it (see notices).
func (j *job) supervise(s *zklock.Session, g grant, sigs chan os.Signal) int {
	select {
	case <-g.lost: // between the grant and now
		j.warnf("%s was lost before the command started; it was not run", j.held())
		return exitLost
	case <-g.revoked:
		j.warnf("%s was revoked before the command started; it was not run", j.held())
		return exitLost
	default:
	}
	if err := becomeSubreaper(); err != nil {
		j.warnf("cannot adopt the command's orphans: %v", err)
	}
	tty := controllingTerminal()
	if tty != nil {
		defer tty.close()
	}
	r := &renewer{s: s, timeout: s.Client().Timing().Timeout, sent: s.OwnershipDeadline()}
	c, err := startSupervised(j.argv, append(os.Environ(), j.env(g)...), tty, clockAt(r.sent), j.grace)
	if err != nil {
		return j.failf(exitError, "", "cannot start the command: %v", err)
	}
	defer close(c.out)
	signal.Notify(sigs, syscall.SIGTSTP, syscall.SIGCONT)
	lost, revoked := j.follow(c, r, g, sigs)
	lost = lost || c.supLost
	if tty != nil {
		tty.takeBack(c.pgid)
	}
	switch {
	case c.failCode != 0:
		return j.failf(c.failCode, "", "%s", c.failMsg)
	case c.exited:
		j.writeExitCode(c.exitCode())
	case !lost && !revoked:
		return exitError // follow said why
	}
	switch {
	case lost:
		j.warnf("%s was lost while the command ran; exiting %d", j.held(), exitLost)
		return exitLost
	case revoked:
		j.warnf("%s was revoked while the command ran; exiting %d", j.held(), exitLost)
		return exitLost
	}
	return c.exitCode()
}

// follow passes signals on, reacts to the supervisor's reports, to the
// loss of the lock and to a revocation request, until zklock has no child
// left. It returns whether the lock was lost, and whether it was revoked,
// meanwhile.
func (j *job) follow(c *command, r *renewer, g grant, sigs <-chan os.Signal) (lost, revoked bool) {
	lostCh, revokedCh := g.lost, g.revoked
	reports := c.reports
	var kill, sweep <-chan time.Time
	renew := time.NewTicker(renewEvery(r.timeout))
	defer renew.Stop()
	sweeper := time.NewTicker(killSweep)
	sweeper.Stop()
	defer sweeper.Stop()
	for {
		select {
		case line, ok := <-reports:
			if ok {
				j.onReport(c, line)
				continue
			}
			reports = nil // the supervisor has exited
			if j.supervisorDied(c) {
				sweeper.Reset(killSweep)
				sweep = sweeper.C
			}
		case <-c.gone:
			if reports != nil {
				for line := range reports { // the supervisor is gone: its last words come soon
					j.onReport(c, line)
				}
				j.supervisorDied(c)
			}
			return lost, revoked
		case sig := <-sigs:
			j.onSignal(c, sig.(syscall.Signal))
		case <-renew.C:
			if !lost {
				j.renew(c, r)
			}
		case <-lostCh:
			lostCh, lost = nil, true
			if revoked { // the command has had its SIGTERM, and SIGKILL stays due when it was
				c.send("lost")
				j.warnf("lost %s (the session may have expired) while the command ends on the revocation", j.held())
				continue
			}
			kill = j.onLost(c)
		case <-revokedCh:
			revokedCh, revoked = nil, true
			if kill == nil {
				kill = j.onRevoked(c)
			}
		case <-kill:
			kill = nil
			c.signal(syscall.SIGKILL)
			sweeper.Reset(killSweep) // until none is left: one may fork between the walk and the kill
			sweep = sweeper.C
			j.warnf("the command outlived the %v grace period; sent SIGKILL", j.grace)
		case <-sweep:
			c.signal(syscall.SIGKILL)
		}
	}
}

// onLost acts on the loss of the lock: SIGTERM to the command, from zklock
// alone (once it knows the command's group: see command.signal), and
// "lost" to the supervisor, which then never starts the command if it has
// not yet, and sends no SIGTERM of its own: the command gets one. It
// returns when SIGKILL is due.
func (j *job) onLost(c *command) <-chan time.Time {
	c.signal(syscall.SIGTERM)
	c.send("lost")
	j.warnf("lost %s (the session may have expired); sent SIGTERM to the command, SIGKILL in %v", j.held(), j.grace)
	return time.After(j.grace)
}

// onRevoked acts on a revocation request (run --revocable) as onLost does
// on a loss, but for the supervisor: the session is alive, so the
// supervisor keeps its own watch on the ownership deadline. The lock is
// released once no process of the command's is left. It returns when
// SIGKILL is due.
func (j *job) onRevoked(c *command) <-chan time.Time {
	c.signal(syscall.SIGTERM)
	j.warnf("revocation requested for %s; sent SIGTERM to the command, SIGKILL in %v", j.path, j.grace)
	return time.After(j.grace)
}

// supervisorDied reports whether the supervisor, which has exited, ended
// before the command; then it SIGKILLs what the supervisor left (the
// command itself has had SIGKILL from the kernel: its parent-death signal;
// its orphans are zklock's now).
func (j *job) supervisorDied(c *command) bool {
	if c.exited || c.failCode != 0 {
		return false
	}
	c.supStatus = <-c.supExited
	c.signal(syscall.SIGKILL)
	j.warnf("the command's supervisor ended abnormally (%v); killed the command", describeStatus(c.supStatus))
	return true
}

// onReport acts on a line of the supervisor's.
func (j *job) onReport(c *command, line string) {
	word, rest, _ := strings.Cut(line, " ")
	switch word {
	case "started":
		pgid, _ := strconv.Atoi(rest)
		c.started(pgid)
	case "fail":
		code, msg, _ := strings.Cut(rest, " ")
		c.failCode, _ = strconv.Atoi(code)
		c.failMsg = msg
	case "stopped":
		if !c.supLost { // after a loss the command is being ended: no job to stop
			j.stopped(c)
		}
	case "lost":
		c.supLost = true
		if rest == "deadline" {
			j.warnf("the ownership deadline of %s passed while zklock did not run (stopped?); its supervisor "+
				"sent SIGTERM to the command, SIGKILL at the end of the %v grace period", j.held(), j.grace)
		}
	case "exit":
		ws, _ := strconv.Atoi(rest)
		c.exited, c.status = true, syscall.WaitStatus(ws)
		if c.tty != nil {
			c.tty.takeBack(c.pgid)
		}
		if pids := c.left(); len(pids) > 0 {
			j.warnf("the command exited %d; %s stays held until the %d process(es) it left end: %s",
				c.exitCode(), j.held(), len(pids), pidList(pids))
		}
	}
}

// onSignal passes a signal zklock received on to the command.
func (j *job) onSignal(c *command, sig syscall.Signal) {
	switch {
	case sig == syscall.SIGCONT:
		// Continued (a shell's fg or bg): in the foreground, the terminal
		// goes back to the command.
		if c.tty != nil && c.pgid != 0 && !c.exited && c.tty.foreground() {
			c.tty.give(c.pgid)
		}
	case sig == syscall.SIGTSTP && c.tty != nil && (c.pgid == 0 || c.exited):
		// No command to stop and report the stop: stop now.
		c.signal(sig)
		stopSelf()
		return
	}
	c.signal(sig)
}

// stopped: the command was stopped. Under job control, zklock takes the
// terminal back and stops too, so that the shell sees the job stopped;
// without a terminal nobody would continue it, so it carries on.
func (j *job) stopped(c *command) {
	if c.tty == nil {
		return
	}
	c.tty.takeBack(c.pgid)
	stopSelf()
}

// stopSelf stops zklock with SIGSTOP, which, unlike SIGTSTP, a process
// group without a parent in its session (orphaned) cannot ignore. While
// stopped zklock does not keep its session alive: the lock is lost after
// the session timeout less the margin, and when continued the command gets
// SIGTERM.
func stopSelf() { _ = syscall.Kill(os.Getpid(), syscall.SIGSTOP) }

func describeStatus(ws syscall.WaitStatus) string {
	if ws.Signaled() {
		return "killed by " + ws.Signal().String()
	}
	return "exit status " + strconv.Itoa(ws.ExitStatus())
}

func pidList(pids []int) string {
	var b strings.Builder
	for i, p := range pids {
		if i == 8 {
			fmt.Fprintf(&b, " and %d more", len(pids)-i)
			break
		}
		if i > 0 {
			b.WriteString(" ")
		}
		b.WriteString(strconv.Itoa(p))
	}
	return b.String()
}
