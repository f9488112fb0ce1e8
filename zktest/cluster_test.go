package zktest_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"

	"github.com/zklock/zklock/zktest"
)

func TestStandalone(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	t.Logf("standalone server started in %v", c.StartupTime())
	ctx := context.Background()

	require.Equal(t, 1, c.Len())
	assert.False(t, c.External())
	assert.Equal(t, c.Servers()[0], c.ConnectString())
	assert.True(t, strings.HasPrefix(c.Server(0).Addr(), "127.0.0.1:"))
	assert.Equal(t, zktest.DefaultTickTime, c.TickTime())
	assert.Equal(t, 2*c.TickTime(), c.MinSessionTimeout())
	assert.Equal(t, 20*c.TickTime(), c.MaxSessionTimeout())
	assert.Positive(t, c.StartupTime())

	conn, _ := connect(t, c.Servers(), 2*time.Second)
	_, _, err := conn.Create(reqCtx(t), "/hello", []byte("world"), client.ModePersistent, openACL)
	require.NoError(t, err)
	data, _, err := conn.Get(reqCtx(t), "/hello")
	require.NoError(t, err)
	assert.Equal(t, "world", string(data))

	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, 0, leader)
	out, err := c.FourLetter(ctx, 0, "ruok")
	require.NoError(t, err)
	assert.Equal(t, "imok", out)
	m, err := c.Mntr(ctx, 0)
	require.NoError(t, err)
	assert.Equal(t, "standalone", m["zk_server_state"])
	nodes, err := c.MntrSum(ctx, "zk_znode_count")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, nodes, int64(2), "/hello and /zookeeper")
	assert.Contains(t, c.Server(0).Log(), "=== zktest: start #1")
}

func TestContainerCheckInterval(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithContainerCheckInterval(100*time.Millisecond))
	conn, _ := connect(t, c.Servers(), 2*time.Second)
	_, _, err := conn.Create(reqCtx(t), "/box", nil, client.ModeContainer, openACL)
	require.NoError(t, err)
	_, _, err = conn.Create(reqCtx(t), "/box/x", nil, client.ModePersistent, openACL)
	require.NoError(t, err)
	require.NoError(t, conn.Delete(reqCtx(t), "/box/x", -1))
	// An emptied container is reaped at the next check.
	eventually(t, "container reaped", func() error {
		_, ok, err := conn.Exists(reqCtx(t), "/box")
		if err == nil && ok {
			return client.ErrNodeExists
		}
		return err
	})
}

func TestStopStartKeepsData(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s := c.Server(0)
	conn, _ := connect(t, c.Servers(), 2*time.Second)
	_, _, err := conn.Create(reqCtx(t), "/kept", []byte("v1"), client.ModePersistent, openACL)
	require.NoError(t, err)

	require.NoError(t, s.Stop())
	assert.False(t, s.Running())
	require.NoError(t, s.Stop(), "stopping a stopped server does nothing")
	require.NoError(t, s.Start())
	assert.True(t, s.Running())
	require.NoError(t, c.WaitReady(context.Background()))

	eventually(t, "read after restart", func() error {
		data, _, err := conn.Get(reqCtx(t), "/kept")
		if err == nil && string(data) != "v1" {
			t.Fatalf("got %q after restart", data)
		}
		return err
	})
	require.NoError(t, s.Kill())
	assert.False(t, s.Running())
	require.NoError(t, s.Start())
	assert.Contains(t, s.Log(), "=== zktest: start #3")
}

func TestPauseResume(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s := c.Server(0)
	require.NoError(t, s.Pause())
	assert.True(t, s.Paused())
	assert.True(t, s.Running(), "a paused server is still running")

	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err := c.FourLetter(ctx, 0, "ruok")
	require.ErrorIs(t, err, context.DeadlineExceeded, "a paused server answers nothing")

	require.NoError(t, s.Resume())
	assert.False(t, s.Paused())
	require.NoError(t, c.WaitReady(context.Background()))
	out, err := c.FourLetter(context.Background(), 0, "ruok")
	require.NoError(t, err)
	assert.Equal(t, "imok", out)
}

func TestStopWhilePaused(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	s := c.Server(0)
	require.NoError(t, s.Pause())
	require.NoError(t, s.Stop())
	assert.False(t, s.Running())
	assert.False(t, s.Paused())
}

func TestExternal(t *testing.T) {
	managed := zktest.Start(t, zktest.WithTickTime(50*time.Millisecond))
	t.Setenv(zktest.EnvServers, managed.ConnectString())

	c := zktest.Start(t)
	require.True(t, c.External())
	assert.Equal(t, managed.Servers(), c.Servers())
	assert.Equal(t, 50*time.Millisecond, c.TickTime(), "read from the server's conf")
	assert.Equal(t, managed.MaxSessionTimeout(), c.MaxSessionTimeout())
	for name, fault := range map[string]func() error{
		"Stop": c.Server(0).Stop, "Start": c.Server(0).Start, "Kill": c.Server(0).Kill,
		"Pause": c.Server(0).Pause, "Resume": c.Server(0).Resume,
	} {
		assert.ErrorIs(t, fault(), zktest.ErrUnmanaged, name)
	}
	assert.True(t, managed.Server(0).Running(), "the external server was left alone")
	leader, err := c.Leader(context.Background())
	require.NoError(t, err)
	assert.Equal(t, 0, leader)
}

// fatalTB records a Fatalf instead of ending the test, to check the message.
type fatalTB struct {
	testing.TB
	fatal string
}

func (f *fatalTB) Fatalf(format string, args ...any) { f.fatal = fmt.Sprintf(format, args...) }

func TestNoZooKeeperFailsWithInstructions(t *testing.T) {
	t.Setenv("ZOOKEEPER_HOME", t.TempDir()) // an installation without jars
	tb := &fatalTB{TB: t}
	c := zktest.Start(tb)
	assert.Nil(t, c)
	assert.Contains(t, tb.fatal, "sudo scripts/install-deps.sh")
	assert.Contains(t, tb.fatal, "ZOOKEEPER_HOME")
	assert.Contains(t, tb.fatal, zktest.EnvServers)
}
