package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper makes orphaned descendants of this process its children
// instead of init's, so that none escapes by re-parenting.
func becomeSubreaper() error {
	return unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
}

// diesWithParent makes the child get SIGKILL when the thread that starts
// it exits. The supervisor starts the command from its main goroutine,
// locked to its thread for the life of the process (see superviseMain).
func diesWithParent(a *syscall.SysProcAttr) { a.Pdeathsig = syscall.SIGKILL }

// selfExe is a path that starts this very program, even if its file was
// replaced or removed since it started.
func selfExe() (string, error) { return "/proc/self/exe", nil }

// ioctlGetTermios reads a terminal's attributes (isTTY).
const ioctlGetTermios = unix.TCGETS

// nameSupervisor gives the supervisor the name supervisorName in the
// kernel (comm, what pkill, killall and ps -o comm read; the file zklock
// executes is /proc/self/exe, which would make it "exe"). Written to
// /proc/self/comm, it names the process (its main thread), whichever
// thread writes; prctl(PR_SET_NAME) would name the calling thread only.
func nameSupervisor() error {
	return os.WriteFile("/proc/self/comm", []byte(supervisorName), 0)
}

// sharedClock reads, in nanoseconds, the clock zklock and its supervisor
// compare the ownership deadline on: CLOCK_BOOTTIME, which, unlike Go's
// monotonic clock (CLOCK_MONOTONIC), counts a suspend of the machine:
// the servers' time ran on.
func sharedClock() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_BOOTTIME, &ts)
	return ts.Nano()
}
