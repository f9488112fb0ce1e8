package main

import (
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"

	"golang.org/x/sys/unix"
)

// terminal is zklock's controlling terminal, for job control: the command
// runs in a process group of its own, so zklock does for it what a shell
// does for a job. While the command runs in the foreground, the terminal's
// foreground group is the command's, and the terminal's signals reach the
// command alone, once. When the command stops (Ctrl-Z), zklock takes the
// terminal back and stops itself, so that the shell sees a stopped job;
// when continued, it gives the terminal back to the command (if zklock is
// in the foreground then) and continues it.
type terminal struct{ f *os.File }

// controllingTerminal opens the controlling terminal; nil without one.
func controllingTerminal() *terminal {
	f, err := os.OpenFile("/dev/tty", os.O_RDWR, 0)
	if err != nil {
		return nil
	}
	return &terminal{f}
}

func (t *terminal) close() { t.f.Close() }

// owner is the terminal's foreground process group; -1 if unknown.
func (t *terminal) owner() int {
	pgrp, err := unix.IoctlGetInt(int(t.f.Fd()), unix.TIOCGPGRP)
	if err != nil {
		return -1
	}
	return pgrp
}

// foreground reports whether zklock's process group is the terminal's
// foreground group: zklock runs in the foreground of its shell.
func (t *terminal) foreground() bool { return t.owner() == syscall.Getpgrp() }

// ignoreTTOU lets zklock, in the background, set the terminal's foreground
// group: the kernel stops a background process that tries, unless it
// ignores SIGTTOU. zklock starts no process after it needs this, so no
// process inherits the ignored signal.
var ignoreTTOU sync.Once

// give makes pgid the terminal's foreground group.
func (t *terminal) give(pgid int) {
	ignoreTTOU.Do(func() { signal.Ignore(syscall.SIGTTOU) })
	_ = unix.IoctlSetPointerInt(int(t.f.Fd()), unix.TIOCSPGRP, pgid)
}

// takeBack makes zklock's group the foreground group again if from is.
func (t *terminal) takeBack(from int) {
	if from > 0 && t.owner() == from {
		t.give(syscall.Getpgrp())
	}
}

// isTerminal reports whether w is a terminal (or another character device,
// such as /dev/null).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// isTTY reports whether w is a terminal (not merely a character device).
func isTTY(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	_, err := unix.IoctlGetTermios(int(f.Fd()), ioctlGetTermios)
	return err == nil
}
