//go:build linux

package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/zklock/zklock"
	"golang.org/x/sys/unix"
)

// openPTY returns the two ends of a new pseudo-terminal.
func openPTY(t *testing.T) (master, slave *os.File) {
	t.Helper()
	master, err := os.OpenFile("/dev/ptmx", os.O_RDWR, 0)
	if err != nil {
		t.Fatalf("open /dev/ptmx: %v", err)
	}
	t.Cleanup(func() { master.Close() })
	var unlock int32
	var n uint32
	if err := ioctl(master, syscall.TIOCSPTLCK, unsafe.Pointer(&unlock)); err != nil {
		t.Fatalf("unlock pty: %v", err)
	}
	if err := ioctl(master, syscall.TIOCGPTN, unsafe.Pointer(&n)); err != nil {
		t.Fatalf("pty number: %v", err)
	}
	slave, err = os.OpenFile(fmt.Sprintf("/dev/pts/%d", n), os.O_RDWR|syscall.O_NOCTTY, 0)
	if err != nil {
		t.Fatalf("open pty: %v", err)
	}
	t.Cleanup(func() { slave.Close() })
	return master, slave
}

func ioctl(f *os.File, req uintptr, arg unsafe.Pointer) error {
	if _, _, errno := syscall.Syscall(syscall.SYS_IOCTL, f.Fd(), req, uintptr(arg)); errno != 0 {
		return errno
	}
	return nil
}

// startOnTerminal runs zklock as the foreground of a new terminal session,
// as from an interactive shell, and returns the terminal's master side.
func startOnTerminal(t *testing.T, servers string, args ...string) (*exec.Cmd, *os.File, *syncBuffer) {
	t.Helper()
	master, slave := openPTY(t)
	ctx, cancel := context.WithTimeout(context.Background(), procTimeout)
	t.Cleanup(cancel)
	cmd := exec.CommandContext(ctx, binary, args...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = slave, slave, slave
	cmd.Env = envWith(servers)
	cmd.SysProcAttr = &syscall.SysProcAttr{Setsid: true, Setctty: true, Ctty: 0}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	slave.Close()
	var out syncBuffer
	go func() { _, _ = out.ReadFrom(master) }() // ends when the master is closed at cleanup
	return cmd, master, &out
}

// On a terminal, a wait shows a line naming the holder, and Ctrl-C reaches
// the command, which decides what to do with it: here it carries on and
// exits 0, and so does zklock. (That it reaches the command once is
// TestTerminalCtrlCReachesTheCommandOnce.)
func TestTerminalProgressAndCtrlC(t *testing.T) {
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	holder := holdLock(t, servers, path, "--data", "the-holder")
	cmd, master, out := startOnTerminal(t, servers, "run", path, "--", "sh", "-c",
		`trap 'echo got-INT' INT; echo started; i=0; while [ $i -lt 30 ]; do sleep 0.1; i=$((i+1)); done`)
	eventually(t, 30*time.Second, "a progress line", func() bool {
		return strings.Contains(out.String(), "waiting for "+path) && strings.Contains(out.String(), "the-holder")
	})
	holder.signal(t, syscall.SIGTERM)
	eventually(t, 30*time.Second, "the command to start", func() bool { return strings.Contains(out.String(), "started") })
	if _, err := master.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zklock: %v; output: %q", err, out.String())
	}
	if !strings.Contains(out.String(), "got-INT") {
		t.Errorf("the command did not get SIGINT; output: %q", out.String())
	}
	holder.wait(t, procTimeout)
}

// On a terminal, status --watch redraws the screen for each state, and
// Ctrl-C stops it with exit 0.
func TestStatusWatchOnTerminal(t *testing.T) {
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	cmd, master, out := startOnTerminal(t, servers, "status", "--watch", path)
	eventually(t, 30*time.Second, "the first state", func() bool {
		return strings.Contains(out.String(), "\033[H\033[2J") && strings.Contains(out.String(), "free, nobody waiting")
	})
	s := newSession(t, servers)
	m := must2(zklock.NewMutex(s, path, zklock.WithData([]byte("the-holder"))))(t)
	check(t, m.Lock(context.Background()))
	eventually(t, 30*time.Second, "the holder on a redrawn screen", func() bool {
		o := out.String()
		return strings.Count(o, "\033[H\033[2J") == 2 && strings.Contains(o[strings.LastIndex(o, "\033[2J"):], "the-holder")
	})
	if _, err := master.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zklock status --watch after Ctrl-C: %v; output: %q", err, out.String())
	}
}

// sigCounter returns the argv of a command that counts the signals it gets
// into a file (see sigCount), and that file.
func sigCounter(t *testing.T) ([]string, string) {
	file := filepath.Join(t.TempDir(), "signals")
	return []string{"env", sigCountEnv + "=" + file, os.Args[0]}, file
}

// foreground returns the terminal's foreground process group.
func foreground(t *testing.T, master *os.File) int {
	t.Helper()
	pgrp, err := unix.IoctlGetInt(int(master.Fd()), unix.TIOCGPGRP)
	if err != nil {
		t.Fatalf("TIOCGPGRP: %v", err)
	}
	return pgrp
}

// Issue 35, item 1: the command runs in a process group of its own, which
// is the terminal's foreground group while it runs, so the terminal's
// Ctrl-C reaches the command once, from the terminal, and not zklock.
func TestTerminalCtrlCReachesTheCommandOnce(t *testing.T) {
	c := shared(t)
	argv, file := sigCounter(t)
	cmd, master, out := startOnTerminal(t, c.ConnectString(), append([]string{"run", lockPath(t, "lock"), "--"}, argv...)...)
	eventually(t, 30*time.Second, "the command to start", func() bool { return strings.Contains(out.String(), "ready") })
	if fg := foreground(t, master); fg == cmd.Process.Pid {
		t.Errorf("the terminal's foreground group is zklock's (%d), not the command's own", fg)
	}
	if _, err := master.Write([]byte{3}); err != nil { // Ctrl-C
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zklock: %v; output: %q", err, out.String())
	}
	if got := readLines(t, file); strings.Join(got, ",") != "interrupt" {
		t.Errorf("the command got %q, want one interrupt", got)
	}
}

// Issue 35, item 1: a SIGINT sent with kill to a zklock on a terminal is
// passed on to the command (it was dropped, taken for the terminal's).
func TestTerminalKillIsForwarded(t *testing.T) {
	c := shared(t)
	argv, file := sigCounter(t)
	cmd, _, out := startOnTerminal(t, c.ConnectString(), append([]string{"run", lockPath(t, "lock"), "--"}, argv...)...)
	eventually(t, 30*time.Second, "the command to start", func() bool { return strings.Contains(out.String(), "ready") })
	if err := cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zklock: %v; output: %q", err, out.String())
	}
	if got := readLines(t, file); strings.Join(got, ",") != "interrupt" {
		t.Errorf("the command got %q, want one interrupt", got)
	}
}

// The command, in the foreground, reads the terminal.
func TestTerminalCommandReadsItsInput(t *testing.T) {
	c := shared(t)
	cmd, master, out := startOnTerminal(t, c.ConnectString(), "run", lockPath(t, "lock"), "--",
		"sh", "-c", `echo started; read line; echo "got $line"`)
	eventually(t, 30*time.Second, "the command to start", func() bool { return strings.Contains(out.String(), "started") })
	if _, err := master.Write([]byte("hello\n")); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zklock: %v; output: %q", err, out.String())
	}
	if !strings.Contains(out.String(), "got hello") {
		t.Errorf("the command did not read its input; output: %q", out.String())
	}
}

// Ctrl-Z stops the command and zklock, so that a shell gets the terminal
// back; a SIGCONT to zklock's group (a shell's fg) resumes both.
func TestTerminalCtrlZStopsAndResumes(t *testing.T) {
	c := shared(t)
	cmd, master, out := startOnTerminal(t, c.ConnectString(), "run", lockPath(t, "lock"), "--",
		"sh", "-c", `echo started; sleep 1; echo resumed`)
	eventually(t, 30*time.Second, "the command to start", func() bool { return strings.Contains(out.String(), "started") })
	if _, err := master.Write([]byte{0x1a}); err != nil { // Ctrl-Z
		t.Fatal(err)
	}
	eventually(t, 30*time.Second, "zklock to stop", func() bool { return procState(t, cmd.Process.Pid) == "T" })
	if fg := foreground(t, master); fg != cmd.Process.Pid {
		t.Errorf("the terminal's foreground group is %d, want zklock's %d back", fg, cmd.Process.Pid)
	}
	if err := syscall.Kill(-cmd.Process.Pid, syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := cmd.Wait(); err != nil {
		t.Fatalf("zklock: %v; output: %q", err, out.String())
	}
	// The command's output may still be in the terminal when zklock exits.
	eventually(t, 10*time.Second, "the command's output after it resumed", func() bool {
		return strings.Contains(out.String(), "resumed")
	})
}

// procState is the state letter of a process, from /proc.
func procState(t *testing.T, pid int) string {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Fatal(err)
	}
	f := strings.Fields(string(b[bytes.LastIndexByte(b, ')')+1:]))
	return f[0]
}
