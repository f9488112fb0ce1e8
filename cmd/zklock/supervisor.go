package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"runtime"
	"strconv"
	"syscall"
	"time"
)

// The command of run and elect does not run as zklock's child but as the
// child of a supervisor: zklock's own binary started as
//
//	zkl-supervise __supervise [--foreground] [--deadline CLOCK --grace NS] -- CMD [ARGS...]
//
// with fd 3 the read end of a pipe only zklock writes to (the ownership
// deadline as it moves, and the loss: see guard; its end closes when
// zklock exits, however it exits, SIGKILL included) and
// fd 4 the write end of a pipe zklock reads the supervisor's reports from.
// Its name (argv[0] and the kernel's comm) is supervisorName, which holds
// no "zklock": 'pkill zklock', 'killall zklock' and 'pidof zklock' kill or
// find zklock and not its supervisor, which then kills the command.
// The supervisor is in a process group of its own, so no signal meant for
// the command's group reaches it; on Linux it is a child subreaper, so the
// command's orphans become its children. It starts the command in a new
// process group (the terminal's foreground group with --foreground), reports
// on fd 4, and reaps every child until none is left, then exits:
//
//	started PID           the command runs; its process group is PID
//	fail CODE MESSAGE     it could not be started (CODE: 126 or 127)
//	stopped               it was stopped (Ctrl-Z, or SIGTTIN in the background)
//	lost WHY              the lock is lost (WHY: zklock, which sent SIGTERM
//	                      itself; or deadline when the deadline passed
//	                      unrenewed: the supervisor sent SIGTERM)
//	exit STATUS           it ended, with this wait status
//
// When fd 3 reads EOF, zklock is gone: the supervisor SIGKILLs the
// command's group and every process under itself, again until none is left.
const supervisorArg = "__supervise"

// supervisorName is the supervisor's argv[0] and, on Linux, its name in
// the kernel (at most 15 bytes).
const supervisorName = "zkl-supervise"

// killSweep is how often a supervisor whose zklock died, or a zklock whose
// grace period ended, looks again for processes to SIGKILL: a process may
// fork between a walk of /proc and the signal.
const killSweep = 50 * time.Millisecond

// superviseMain is the supervisor; it returns its exit status.
func superviseMain(args []string) int {
	// The parent-death signal (Linux) fires when the thread that started
	// the command exits, not the process. The main goroutine starts the
	// command and, locked to its thread, never unlocks it: the Go runtime
	// then never runs anything else on that thread nor ends it before the
	// process exits, so the signal comes exactly when the supervisor dies.
	runtime.LockOSThread()
	ctl, report := os.NewFile(3, "zklock-control"), os.NewFile(4, "zklock-reports")
	if ctl == nil || report == nil {
		fmt.Fprintln(os.Stderr, "zklock: "+supervisorArg+" is zklock's own; it is not for use")
		return exitUsage
	}
	syscall.CloseOnExec(3) // the command must not hold zklock's pipes
	syscall.CloseOnExec(4)
	// Caught, not ignored: a caught signal's disposition is reset when the
	// command is executed, an ignored one would be inherited.
	signal.Notify(make(chan os.Signal, 1), forwarded...)
	signal.Notify(make(chan os.Signal, 1), syscall.SIGPIPE, syscall.SIGTSTP, syscall.SIGTTIN, syscall.SIGTTOU)
	_ = becomeSubreaper()
	_ = nameSupervisor()
	opts, err := parseSuperviseArgs(args)
	if err != nil {
		fmt.Fprintln(os.Stderr, "zklock: "+supervisorArg+": "+err.Error())
		return exitUsage
	}
	g := &guard{report: report, deadline: opts.deadline, grace: opts.grace}
	go g.watch(ctl)
	pid, code, err := g.start(opts.argv, opts.fg)
	if err != nil {
		fmt.Fprintf(report, "fail %d %s\n", code, oneLine(err.Error()))
		return 0
	}
	fmt.Fprintf(report, "started %d\n", pid)
	reapAll(pid, report)
	g.mu.Lock() // a loss the guard is acting on gets reported before the exit
	return 0
}

// superviseArgs are the supervisor's arguments.
type superviseArgs struct {
	fg       bool
	deadline int64 // on sharedClock; 0: none
	grace    time.Duration
	argv     []string
}

func parseSuperviseArgs(args []string) (superviseArgs, error) {
	var o superviseArgs
	for len(args) > 0 && args[0] != "--" {
		switch {
		case args[0] == "--foreground":
			o.fg, args = true, args[1:]
		case (args[0] == "--deadline" || args[0] == "--grace") && len(args) > 1:
			n, err := strconv.ParseInt(args[1], 10, 64)
			if err != nil {
				return o, fmt.Errorf("bad %s: %w", args[0], err)
			}
			if args[0] == "--deadline" {
				o.deadline = n
			} else {
				o.grace = time.Duration(n)
			}
			args = args[2:]
		default:
			return o, errors.New("bad arguments")
		}
	}
	if len(args) < 2 {
		return o, errors.New("bad arguments")
	}
	o.argv = args[1:]
	return o, nil
}

// startCommand starts argv in a process group of its own, and returns its
// pid, or the exit code that says why it could not start.
func startCommand(argv []string, fg bool) (int, int, error) {
	path, err := exec.LookPath(argv[0])
	if err != nil {
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			return 0, exitNotFound, fmt.Errorf("command not found: %w", err)
		}
		return 0, exitNoExec, fmt.Errorf("cannot run the command: %w", err)
	}
	attr := &syscall.SysProcAttr{Setpgid: true}
	diesWithParent(attr)
	if fg {
		// The terminal's signals (Ctrl-C, Ctrl-\, Ctrl-Z) then go to the
		// command's group, which zklock is not in, and the command can
		// read the terminal. The child does this before it executes the
		// command, so the command never runs in the background.
		if tty, err := os.Open("/dev/tty"); err == nil {
			defer tty.Close()
			attr.Foreground, attr.Ctty = true, int(tty.Fd())
		}
	}
	pid, err := syscall.ForkExec(path, argv, &syscall.ProcAttr{
		Env: os.Environ(), Files: []uintptr{0, 1, 2}, Sys: attr})
	switch {
	case errors.Is(err, syscall.ENOENT):
		return 0, exitNotFound, fmt.Errorf("command not found: %s: %w", path, err)
	case err != nil:
		return 0, exitNoExec, fmt.Errorf("cannot run the command: %s: %w", path, err)
	}
	return pid, 0, nil
}

// reapAll waits for every child (the command, and the orphans the
// supervisor adopted) until none is left, reporting the command's stops
// and its end.
func reapAll(cmd int, report io.Writer) {
	for {
		var ws syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &ws, syscall.WUNTRACED, nil)
		switch {
		case errors.Is(err, syscall.EINTR):
			continue
		case err != nil: // ECHILD: nothing is left
			return
		case pid != cmd:
		case ws.Stopped():
			fmt.Fprintln(report, "stopped")
		default:
			fmt.Fprintf(report, "exit %d\n", int(ws))
		}
	}
}

// signalTree sends sig to the process group pgid, and to every process
// under root that left that group, except the process except (not its
// descendants). It returns how many processes it found besides the group.
func signalTree(pgid, root, except int, sig syscall.Signal) int {
	if pgid > 0 {
		_ = syscall.Kill(-pgid, sig)
	}
	others := 0
	for pid, g := range descendants(root) {
		if pid != except && g != pgid {
			_ = syscall.Kill(pid, sig)
			others++
		}
	}
	return others
}
