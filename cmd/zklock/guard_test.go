//go:build linux

package main

// The supervisor's copy of the ownership deadline (guard), driven through
// its pipes as zklock drives it. These pin the protocol's edges; the
// real-server test of the whole is TestRunZklockStoppedAloneLosesTheCommand.

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// supervisorProc is a supervisor started by a test standing in for zklock.
type supervisorProc struct {
	cmd     *exec.Cmd
	ctl     *os.File    // zklock's end of the control pipe
	reports chan string // closed when the supervisor exits
	done    chan struct{}
}

func startSupervisor(t *testing.T, deadline int64, grace time.Duration, argv ...string) *supervisorProc {
	t.Helper()
	ctlR, ctlW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	repR, repW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	args := []string{supervisorArg, "--deadline", strconv.FormatInt(deadline, 10),
		"--grace", strconv.FormatInt(int64(grace), 10), "--"}
	s := &supervisorProc{cmd: exec.Command(binary, append(args, argv...)...), ctl: ctlW,
		reports: make(chan string, 16), done: make(chan struct{})}
	s.cmd.ExtraFiles = []*os.File{ctlR, repW}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	ctlR.Close()
	repW.Close()
	go func() {
		defer close(s.reports)
		defer repR.Close()
		sc := bufio.NewScanner(repR)
		for sc.Scan() {
			s.reports <- sc.Text()
		}
	}()
	go func() { _ = s.cmd.Wait(); close(s.done) }()
	t.Cleanup(func() {
		ctlW.Close() // the supervisor kills what is left and exits
		<-s.done
	})
	return s
}

// next returns the supervisor's next report, failing the test if none comes
// within d.
func (s *supervisorProc) next(t *testing.T, d time.Duration) string {
	t.Helper()
	select {
	case line, ok := <-s.reports:
		if !ok {
			t.Fatalf("the supervisor exited without a further report")
		}
		return line
	case <-time.After(d):
		t.Fatalf("no report from the supervisor within %v", d)
	}
	return ""
}

// A loss between the grant and the start of the command: the deadline has
// passed when the supervisor is about to start the command, which it then
// does not start.
func TestSupervisorDoesNotStartAfterTheDeadline(t *testing.T) {
	ran := filepath.Join(t.TempDir(), "ran")
	s := startSupervisor(t, sharedClock()-int64(time.Millisecond), 100*time.Millisecond,
		"sh", "-c", `echo ran > "$0"`, ran)
	if line := s.next(t, procTimeout); !strings.HasPrefix(line, "fail "+strconv.Itoa(exitLost)+" ") {
		t.Errorf("the supervisor's report %q, want fail %d", line, exitLost)
	}
	<-s.done
	if _, err := os.Stat(ran); err == nil {
		t.Errorf("the command ran after the deadline had passed")
	}
}

// With zklock silent (stopped), the supervisor sends SIGTERM half the grace
// period after the deadline and SIGKILL at its end, to a command that
// ignores SIGTERM; while zklock renews the deadline, it does nothing.
func TestSupervisorEndsTheCommandAtTheDeadline(t *testing.T) {
	const grace = 300 * time.Millisecond
	s := startSupervisor(t, sharedClock()+int64(time.Second), grace, "sh", "-c", `trap "" TERM; sleep 300 & wait`)
	if line := s.next(t, procTimeout); !strings.HasPrefix(line, "started ") {
		t.Fatalf("the supervisor's report %q, want started", line)
	}
	renewed := time.Now().Add(2 * time.Second)
	var deadline int64
	for time.Now().Before(renewed) { // renewing past the first deadline
		deadline = sharedClock() + int64(time.Second)
		if _, err := s.ctl.WriteString("deadline " + strconv.FormatInt(deadline, 10) +
			" " + strconv.FormatInt(int64(grace), 10) + "\n"); err != nil {
			t.Fatal(err)
		}
		select {
		case line := <-s.reports:
			t.Fatalf("the supervisor reported %q while the deadline was renewed", line)
		case <-time.After(100 * time.Millisecond):
		}
	}
	if line := s.next(t, procTimeout); line != "lost deadline" {
		t.Fatalf("the supervisor's report %q, want lost deadline", line)
	}
	if late := time.Duration(sharedClock() - deadline); late < grace/2 {
		t.Errorf("SIGTERM %v after the deadline, want no earlier than half the grace period, %v", late, grace/2)
	}
	line := s.next(t, procTimeout)
	killed := time.Duration(sharedClock() - deadline)
	if line != "exit 9" { // wait status: killed by SIGKILL
		t.Errorf("the supervisor's report %q, want exit 9 (SIGKILL)", line)
	}
	if killed < grace {
		t.Errorf("SIGKILL %v after the deadline, want no earlier than the grace period, %v", killed, grace)
	}
	t.Logf("SIGKILL reported %v after the deadline (grace %v)", killed, grace)
	<-s.done
}
