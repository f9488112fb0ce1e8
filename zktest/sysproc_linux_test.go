package zktest

import (
	"os/exec"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// waitStopped sees a process's threads stop after SIGSTOP and run again
// after SIGCONT; a process that is gone has no running thread.
func TestWaitStopped(t *testing.T) {
	cmd := exec.Command("sleep", "30")
	require.NoError(t, cmd.Start())
	pid := cmd.Process.Pid
	defer func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }()

	n, err := runningThreads(pid)
	require.NoError(t, err)
	require.Equal(t, 1, n, "sleep has one thread, sleeping: not stopped")

	require.NoError(t, cmd.Process.Signal(syscall.SIGSTOP))
	require.NoError(t, waitStopped(pid, 5*time.Second))
	n, err = runningThreads(pid)
	require.NoError(t, err)
	require.Zero(t, n)

	require.NoError(t, cmd.Process.Signal(syscall.SIGCONT))
	require.Eventually(t, func() bool { n, _ := runningThreads(pid); return n == 1 }, 5*time.Second, time.Millisecond)
	require.Error(t, waitStopped(pid, 20*time.Millisecond), "a running process is not reported stopped")

	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	n, err = runningThreads(pid)
	require.NoError(t, err)
	require.Zero(t, n, "a reaped process has no threads")
}
