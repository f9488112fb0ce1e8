package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"
)

// The supervisor keeps its own copy of the ownership deadline, because
// zklock, which fires the loss signal at that deadline, may not run when
// it passes: stopped alone (SIGSTOP from an operator or a debugger, a
// frozen cgroup) while the supervisor, in another process group, is not.
// zklock writes on the control pipe (fd 3), when they change:
//
//	deadline CLOCK GRACE   the ownership deadline is CLOCK (sharedClock, ns);
//	                       the grace period is GRACE (ns)
//	lost                   the lock is lost
//
// The first deadline and grace come as --deadline and --grace. Both
// processes run on one machine and read the same clock, so no wall time
// and no transit time enter the comparison. When the deadline passes
// without a later one, the supervisor sends the command SIGTERM (and
// SIGCONT, so that a stopped command can act on it) half the grace period
// after the deadline, and SIGKILL half a grace period after that: at the
// end of the grace period, as zklock would, later only by the lateness of
// the supervisor's timer, which the rest of the safety margin absorbs as
// it does zklock's. The half grace before SIGTERM absorbs the lag of
// zklock's renewals (it looks every renewEvery); the half after is the
// least time a command has between SIGTERM and SIGKILL when zklock, alive
// but late, is overtaken by its supervisor. It reports "lost" on fd 4.

// guard is the supervisor's side: the deadline, and whether the command
// may still be started.
type guard struct {
	report io.Writer

	mu       sync.Mutex
	pgid     int // the command's process group, once started
	lost     bool
	deadline int64 // on sharedClock; 0: none given
	grace    time.Duration
}

// guardPoll bounds how long the supervisor sleeps between looks at the
// clock: sharedClock counts a suspend of the machine (Linux), Go's timers
// do not.
const guardPoll = time.Second

// start starts the command with startCommand unless the lock is already
// lost, so that a loss before the start never lets the command run.
func (g *guard) start(argv []string, fg bool) (int, int, error) {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost || g.passed(0) {
		g.lost = true
		return 0, exitLost, fmt.Errorf("the lock was lost before the command started; it was not run")
	}
	pid, code, err := startCommand(argv, fg)
	g.pgid = pid
	return pid, code, err
}

// passed reports whether the deadline plus after has passed; g.mu is held.
func (g *guard) passed(after time.Duration) bool {
	return g.deadline != 0 && sharedClock() >= g.deadline+int64(after)
}

// watch follows zklock's control lines and the clock until zklock is gone;
// then, or at the end of the grace period after a loss, it SIGKILLs every
// process of the command's until the supervisor exits.
func (g *guard) watch(ctl io.Reader) {
	lines := make(chan string)
	go func() {
		defer close(lines)
		sc := bufio.NewScanner(ctl)
		for sc.Scan() {
			lines <- sc.Text()
		}
	}()
	wake := time.NewTimer(g.sleep())
	var kill <-chan time.Time
	for {
		select {
		case line, ok := <-lines:
			if !ok { // zklock is gone
				g.killForever()
			}
			if g.onLine(line) {
				kill = time.After(g.grace)
			}
		case <-wake.C:
		case <-kill:
			g.killForever()
		}
		if kill == nil && g.expire() {
			kill = time.After(g.grace - g.grace/2)
		}
		wake.Reset(g.sleep())
	}
}

// onLine applies a control line; it reports whether zklock said the lock
// is lost (the first time).
func (g *guard) onLine(line string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost {
		return false
	}
	f := strings.Fields(line)
	switch {
	case len(f) == 1 && f[0] == "lost":
		// zklock has sent the command SIGTERM itself (or sends it once it
		// reads "started"): a second would reach a command between its
		// first and its exit, and many take a second SIGTERM for "stop
		// now, without cleaning up".
		g.loseLocked("zklock", false)
		return true
	case len(f) == 3 && f[0] == "deadline" && !g.passed(0):
		// A deadline that passed is never moved: its epoch is over, and a
		// later one belongs to another.
		d, err1 := strconv.ParseInt(f[1], 10, 64)
		gr, err2 := strconv.ParseInt(f[2], 10, 64)
		if err1 == nil && err2 == nil {
			g.deadline, g.grace = d, time.Duration(gr)
		}
	}
	return false
}

// expire acts when half the grace period after the deadline has passed;
// it reports whether it did.
func (g *guard) expire() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost || !g.passed(g.grace/2) {
		return false
	}
	g.loseLocked("deadline", true)
	return true
}

// loseLocked marks the lock lost and sends the command SIGTERM if term
// (zklock sends its own on a loss it found), and SIGCONT, so that a
// stopped command acts on it; g.mu is held.
func (g *guard) loseLocked(why string, term bool) {
	g.lost = true
	if g.pgid != 0 {
		if term {
			signalTree(g.pgid, os.Getpid(), 0, syscall.SIGTERM)
		}
		signalTree(g.pgid, os.Getpid(), 0, syscall.SIGCONT)
	}
	fmt.Fprintf(g.report, "lost %s\n", why)
}

// sleep is how long watch may sleep before it looks at the clock again.
func (g *guard) sleep() time.Duration {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.lost || g.deadline == 0 {
		return guardPoll
	}
	d := time.Duration(g.deadline+int64(g.grace/2)-sharedClock()) + time.Millisecond
	return min(max(d, time.Millisecond), guardPoll)
}

// killForever SIGKILLs the command's group and every process under the
// supervisor, again and again (one may fork between a walk of /proc and
// the signal), until the supervisor exits when none is left.
func (g *guard) killForever() {
	g.mu.Lock()
	g.lost = true // nothing starts any more
	pgid := g.pgid
	g.mu.Unlock()
	for {
		signalTree(pgid, os.Getpid(), 0, syscall.SIGKILL)
		time.Sleep(killSweep)
	}
}
