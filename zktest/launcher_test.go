package zktest

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// launchLimit bounds each Launch in these tests; a cold JVM on a busy
// two-core machine can take many seconds.
const launchLimit = 60 * time.Second

func TestLaunch(t *testing.T) {
	t.Setenv(EnvServers, "")
	ctx, cancel := context.WithTimeout(context.Background(), launchLimit)
	defer cancel()
	c, lt, err := launch(ctx, 1, nil)
	require.NoError(t, err)
	closed := false
	defer func() {
		if !closed {
			assert.NoError(t, c.Close())
		}
	}()

	assert.False(t, c.External())
	require.Equal(t, 1, c.Len())
	assert.True(t, strings.HasPrefix(c.Servers()[0], "127.0.0.1:"))
	assert.Positive(t, c.StartupTime())
	out, err := c.FourLetter(ctx, 0, "ruok")
	require.NoError(t, err)
	assert.Equal(t, "imok", out)
	require.NotEmpty(t, lt.dirs)
	for _, d := range lt.dirs {
		assert.DirExists(t, d)
	}

	// With ZKTEST_SERVERS pointing at it, a second Launch reuses it and its
	// Close leaves it running.
	t.Setenv(EnvServers, c.ConnectString())
	ext, err := Launch(ctx, 1)
	require.NoError(t, err)
	assert.True(t, ext.External())
	assert.Equal(t, c.Servers(), ext.Servers())
	assert.NoError(t, ext.Close())
	_, err = c.Leader(ctx)
	assert.NoError(t, err, "the server behind ZKTEST_SERVERS still serves after the external Close")

	closed = true
	require.NoError(t, c.Close())
	assert.False(t, c.Server(0).Running())
	for _, d := range lt.dirs {
		assert.NoDirExists(t, d)
	}
	_, err = c.FourLetter(ctx, 0, "ruok")
	assert.Error(t, err, "the server still answers after Close")
	assert.NoError(t, c.Close(), "a second Close")
}

// TestLaunchCancel cancels a Launch once its JVM is running and checks that
// nothing is left: no server process, no files.
func TestLaunchCancel(t *testing.T) {
	t.Setenv(EnvServers, "")
	if runtime.GOOS != "linux" {
		t.Skip("watches the JVM through /proc")
	}
	ctx, cancel := context.WithTimeout(context.Background(), launchLimit)
	defer cancel()
	sawJVM := make(chan struct{})
	go func() {
		defer cancel()
		for ctx.Err() == nil {
			if len(javaChildren(t)) > 0 {
				close(sawJVM)
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}()
	c, lt, err := launch(ctx, 1, nil)
	require.Nil(t, c)
	require.ErrorIs(t, err, context.Canceled)
	<-ctx.Done()
	select {
	case <-sawJVM:
	default:
		t.Fatal("cancelled before the JVM ran")
	}
	require.NotEmpty(t, lt.dirs)
	for _, d := range lt.dirs {
		assert.NoDirExists(t, d)
	}
	assert.Empty(t, javaChildren(t), "a server outlived its cancelled Launch")
}

func TestLaunchErrors(t *testing.T) {
	t.Run("ensemble of 0", func(t *testing.T) {
		_, err := Launch(context.Background(), 0)
		assert.ErrorContains(t, err, "ensemble of 0")
	})
	t.Run("bad option", func(t *testing.T) {
		_, err := Launch(context.Background(), 1, WithTickTime(time.Millisecond))
		assert.ErrorContains(t, err, "tick time")
	})
	t.Run("context done", func(t *testing.T) {
		ctx, cancel := context.WithCancel(context.Background())
		cancel()
		_, err := Launch(ctx, 1)
		assert.ErrorIs(t, err, context.Canceled)
	})
	t.Run("bad ZKTEST_SERVERS", func(t *testing.T) {
		t.Setenv(EnvServers, "no-port")
		_, err := Launch(context.Background(), 1)
		assert.ErrorContains(t, err, "is not host:port")
	})
	t.Run("Close of a Start cluster", func(t *testing.T) {
		c := &Cluster{t: t}
		assert.ErrorContains(t, c.Close(), "Close is for a Cluster from Launch")
	})
}

// TestLaunchNoZooKeeper checks that without any ZooKeeper the error says how
// to install one, and how to enable the Docker fallback.
func TestLaunchNoZooKeeper(t *testing.T) {
	t.Setenv(EnvServers, "")
	t.Setenv("ZOOKEEPER_HOME", t.TempDir())
	useFallback(t, nil)
	_, err := Launch(context.Background(), 1)
	require.Error(t, err)
	assert.Contains(t, err.Error(), "no ZooKeeper to run")
	assert.Contains(t, err.Error(), "the Docker fallback is not linked in")
	assert.Contains(t, err.Error(), "scripts/install-deps.sh")
	assert.Contains(t, err.Error(), dockerImport)
}

// javaChildren returns the pids of this process's children named java.
func javaChildren(t *testing.T) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		t.Errorf("read /proc: %v", err)
		return nil
	}
	self := strconv.Itoa(os.Getpid())
	var pids []int
	for _, e := range entries {
		pid, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...; comm may hold spaces and parentheses.
		s := string(b)
		open, end := strings.IndexByte(s, '('), strings.LastIndexByte(s, ')')
		if open < 0 || end < open {
			continue
		}
		fields := strings.Fields(s[end+1:])
		if s[open+1:end] == "java" && len(fields) > 1 && fields[1] == self {
			pids = append(pids, pid)
		}
	}
	return pids
}
