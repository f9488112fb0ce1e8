package main

import (
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
