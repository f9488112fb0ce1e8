package zktest

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
	"time"
)

// sysProcAttr asks Linux to kill a server if the test binary dies first (a
// panic or a go test -timeout), so no JVM outlives its test.
func sysProcAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}

// waitStopped waits until every thread of pid is stopped after a SIGSTOP.
// The signal is delivered asynchronously: a JVM busy on another core can
// still answer a request sent the moment kill(2) returns, which a test of a
// paused server must not see. It gives up after limit.
func waitStopped(pid int, limit time.Duration) error {
	deadline := time.Now().Add(limit)
	for {
		running, err := runningThreads(pid)
		if err != nil || running == 0 {
			return err
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("zktest: %d thread(s) of process %d still running %v after SIGSTOP", running, pid, limit)
		}
		time.Sleep(time.Millisecond)
	}
}

// runningThreads counts the threads of pid not yet stopped (state R, S or
// D in /proc/<pid>/task/<tid>/stat). A process that is gone has none.
func runningThreads(pid int) (int, error) {
	dir := fmt.Sprintf("/proc/%d/task", pid)
	tids, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, err
	}
	n := 0
	for _, tid := range tids {
		b, err := os.ReadFile(dir + "/" + tid.Name() + "/stat")
		if err != nil {
			continue // the thread exited
		}
		// "tid (comm) S ...": comm may hold spaces and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 || i+2 >= len(b) {
			return 0, fmt.Errorf("zktest: cannot read the state in %s/%s/stat", dir, tid.Name())
		}
		switch b[i+2] {
		case 'R', 'S', 'D':
			n++
		}
	}
	return n, nil
}
