package zklock_test

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// TestHelperHoldLock is not a test: TestMutexHolderKilled runs the test
// binary again with it selected, as a separate holder process to SIGKILL.
func TestHelperHoldLock(t *testing.T) {
	addr, path := os.Getenv("ZKLOCK_HELPER_SERVER"), os.Getenv("ZKLOCK_HELPER_PATH")
	if addr == "" {
		return // run directly: nothing to do
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(addr), zklock.WithSessionTimeout(2*time.Second))
	require.NoError(t, err)
	defer s.Close()
	m, err := zklock.NewMutex(s, path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	os.Stdout.WriteString("held\n")
	<-ctx.Done() // until killed; bounded by the minute above
}

func TestMutexHolderKilled(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestHelperHoldLock$", "-test.count=1")
	cmd.Env = append(os.Environ(), "ZKLOCK_HELPER_SERVER="+c.Servers()[0], "ZKLOCK_HELPER_PATH="+path)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	require.NoError(t, err)
	require.Equal(t, "held", strings.TrimSpace(line))

	s := newSession(t, c.Servers())
	m, _ := zklock.NewMutex(s, path)
	require.ErrorIs(t, m.TryLock(ctx), zklock.ErrLocked)
	waiting := make(chan error, 1)
	go func() { waiting <- m.Lock(ctx) }()
	require.NoError(t, cmd.Process.Kill()) // SIGKILL: no chance to clean up
	killed := time.Now()
	require.NoError(t, <-waiting)
	took := time.Since(killed)
	t.Logf("next waiter acquired %v after the holder was killed (session timeout 2s)", took)
	require.Less(t, took, 2*time.Second+2*c.TickTime()+3*time.Second,
		"the server must expire the dead holder's session within its timeout")
	require.NoError(t, m.Unlock(ctx))
}
