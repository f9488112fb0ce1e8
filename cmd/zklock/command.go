package main

import (
	"bufio"
	"errors"
	"os"
	"strconv"
	"syscall"
	"time"
)

// command is zklock's handle on the command it runs through a supervisor
// (see superviseMain): the supervisor's reports, the command's process
// group once it has started, and what zklock learnt of its end.
type command struct {
	sup       int                       // the supervisor's pid
	ctl       *os.File                  // zklock's end of the control pipe: open while zklock lives
	reports   <-chan string             // the supervisor's report lines; closed when it exits
	supExited <-chan syscall.WaitStatus // the supervisor's wait status, once reaped
	gone      <-chan struct{}           // closed when zklock has no child left
	tty       *terminal                 // nil without a controlling terminal

	out chan string // control lines for the supervisor: see send

	pgid      int              // the command's process group; 0 until it started
	pending   []syscall.Signal // signals sent before it started
	exited    bool             // status is the command's wait status
	status    syscall.WaitStatus
	failCode  int // it could not be started: exitNotFound or exitNoExec
	failMsg   string
	supStatus syscall.WaitStatus // the supervisor's, once reaped
	supLost   bool               // the supervisor reported the loss
}

// startSupervised starts the supervisor that runs argv with env, and the
// goroutines that read its reports and reap zklock's children. zklock must
// already be a subreaper, so that the command's processes come back to it
// if the supervisor dies. The command gets zklock's standard input, output
// and error.
//
// deadline (on sharedClock) and grace are the supervisor's first copy of
// the ownership deadline and the grace period (see guard); later ones go
// through send.
func startSupervised(argv, env []string, tty *terminal, deadline int64, grace time.Duration) (*command, error) {
	exe, err := selfExe()
	if err != nil {
		return nil, err
	}
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		ctlR.Close()
		ctlW.Close()
		return nil, err
	}
	args := []string{supervisorName, supervisorArg}
	if tty != nil && tty.foreground() {
		args = append(args, "--foreground")
	}
	args = append(args, "--deadline", strconv.FormatInt(deadline, 10), "--grace", strconv.FormatInt(int64(grace), 10))
	pid, err := syscall.ForkExec(exe, append(append(args, "--"), argv...), &syscall.ProcAttr{
		Env: env, Files: []uintptr{0, 1, 2, ctlR.Fd(), repW.Fd()},
		Sys: &syscall.SysProcAttr{Setpgid: true}})
	ctlR.Close()
	repW.Close()
	if err != nil {
		ctlW.Close()
		repR.Close()
		return nil, err
	}
	c := &command{sup: pid, ctl: ctlW, tty: tty, out: make(chan string, 1)}
	go writeControl(ctlW, c.out)
	c.reports = readReports(repR)
	c.supExited, c.gone = reapChildren(pid)
	return c, nil
}

// send passes a control line to the supervisor (see guard), replacing one
// not yet written: only the latest deadline matters. It never blocks, so
// a supervisor that does not read (stopped) cannot delay zklock's signals.
// A "lost" line is the last one sent.
func (c *command) send(line string) {
	for {
		select {
		case c.out <- line:
			return
		default:
		}
		select {
		case <-c.out:
		default:
		}
	}
}

// writeControl writes the control lines to the supervisor until out is
// closed, then closes the pipe (the supervisor then SIGKILLs what is left).
func writeControl(ctl *os.File, out <-chan string) {
	defer ctl.Close()
	for line := range out {
		if _, err := ctl.WriteString(line + "\n"); err != nil {
			for range out { // the supervisor is gone; drain
			}
			return
		}
	}
}

func readReports(r *os.File) <-chan string {
	ch := make(chan string)
	go func() {
		defer close(ch)
		defer r.Close()
		sc := bufio.NewScanner(r)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

// reapChildren waits for every child of zklock: the supervisor, and any
// process of the command adopted after the supervisor died. gone is closed
// when none is left.
func reapChildren(sup int) (<-chan syscall.WaitStatus, <-chan struct{}) {
	exited, gone := make(chan syscall.WaitStatus, 1), make(chan struct{})
	go func() {
		defer close(gone)
		for {
			var ws syscall.WaitStatus
			pid, err := syscall.Wait4(-1, &ws, 0, nil)
			switch {
			case errors.Is(err, syscall.EINTR):
			case err != nil: // ECHILD
				return
			case pid == sup:
				exited <- ws
			}
		}
	}()
	return exited, gone
}

// signal sends sig to the command's process group and to every process of
// the command's that left it; before the command has started, it is kept
// and sent when it starts.
func (c *command) signal(sig syscall.Signal) {
	if c.pgid == 0 {
		if c.failCode == 0 {
			c.pending = append(c.pending, sig)
		}
		return
	}
	signalTree(c.pgid, os.Getpid(), c.sup, sig)
}

// started records the command's process group and sends it the signals
// that came before.
func (c *command) started(pgid int) {
	c.pgid = pgid
	for _, sig := range c.pending {
		c.signal(sig)
	}
	c.pending = nil
}

// left returns the pids of the command's processes still running (the
// supervisor aside).
func (c *command) left() []int {
	var pids []int
	for pid := range descendants(os.Getpid()) {
		if pid != c.sup {
			pids = append(pids, pid)
		}
	}
	return pids
}

// exitCode is the command's exit code as a shell reports it: 128+N if
// signal N killed it.
func (c *command) exitCode() int {
	if c.status.Signaled() {
		return exitSignal + int(c.status.Signal())
	}
	return c.status.ExitStatus()
}
