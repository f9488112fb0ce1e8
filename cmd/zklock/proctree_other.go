//go:build !linux

package main

import (
	"os"
	"syscall"

	"golang.org/x/sys/unix"
)

// becomeSubreaper: only Linux has child subreapers; elsewhere an orphan of
// the command is re-parented to init and not waited for.
func becomeSubreaper() error { return nil }

// diesWithParent: no parent-death signal here. The supervisor still kills
// the command's process group when zklock dies (it sees its control pipe
// close), but not a process that left the group.
func diesWithParent(*syscall.SysProcAttr) {}

func selfExe() (string, error) { return os.Executable() }

// ioctlGetTermios reads a terminal's attributes (isTTY).
const ioctlGetTermios = unix.TIOCGETA

// nameSupervisor: the kernel's name of a process is the base name of the
// file it executes; only Linux lets a process change it. Here 'pkill
// zklock' matches the supervisor too.
func nameSupervisor() error { return nil }

// sharedClock reads, in nanoseconds, the clock zklock and its supervisor
// compare the ownership deadline on: CLOCK_MONOTONIC.
func sharedClock() int64 {
	var ts unix.Timespec
	_ = unix.ClockGettime(unix.CLOCK_MONOTONIC, &ts)
	return ts.Nano()
}
