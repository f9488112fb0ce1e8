//go:build linux

package main

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"
	"unsafe"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
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

// On a terminal, a long wait shows a progress line naming the holder, and
// Ctrl-C reaches the command, which decides what to do with it: here it
// carries on and exits 0, and so does zklock. (zklock does not pass the
// terminal's SIGINT on a second time, but shells coalesce two SIGINTs
// that arrive together, so that part is not observable here.)
func TestTerminalProgressAndCtrlC(t *testing.T) {
	c := zktest.Start(t)
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
	c := zktest.Start(t)
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
