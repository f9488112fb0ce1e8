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

func TestEnsembleLeaderFailover(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3)
	t.Logf("3-node ensemble started in %v", c.StartupTime())
	ctx := context.Background()
	require.Equal(t, 3, c.Len())

	old, err := c.Leader(ctx)
	require.NoError(t, err)
	conn, _ := connect(t, c.Servers(), 4*time.Second)
	_, _, err = conn.Create(reqCtx(t), "/before", []byte("1"), client.ModePersistent, openACL)
	require.NoError(t, err)
	alive, err := c.SessionAlive(ctx, conn.SessionID())
	require.NoError(t, err)
	assert.True(t, alive, "the leader's dump lists a session without ephemerals")

	require.NoError(t, c.Server(old).Kill())
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, old, leader, "a new leader was elected")
	eventually(t, "write after failover", func() error {
		_, _, err := conn.Create(reqCtx(t), "/after", []byte("2"), client.ModePersistent, openACL)
		if err == client.ErrNodeExists {
			return nil // an earlier try went through but its reply was lost
		}
		return err
	})

	restartAndRejoin(t, c, old)
}

// restartAndRejoin restarts server i and checks that it rejoins as a
// follower with everything written while it was down.
func restartAndRejoin(t *testing.T, c *zktest.Cluster, i int) {
	t.Helper()
	ctx := context.Background()
	require.NoError(t, c.Server(i).Start())
	require.NoError(t, c.WaitReady(ctx))
	out, err := c.FourLetter(ctx, i, "srvr")
	require.NoError(t, err)
	assert.Contains(t, out, "Mode: follower")
	direct, _ := connect(t, []string{c.Server(i).Addr()}, 4*time.Second)
	eventually(t, "read on the rejoined server", func() error {
		err := direct.Sync(reqCtx(t), "/")
		if err != nil {
			return err
		}
		_, _, err = direct.Get(reqCtx(t), "/after")
		return err
	})
	nodes, err := c.MntrSum(ctx, "zk_znode_count")
	require.NoError(t, err)
	assert.GreaterOrEqual(t, nodes, int64(3*3), "each server has /, /before, /after and more")
}

func TestEnsemblePausedLeaderIsReplaced(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3)
	ctx := context.Background()
	old, err := c.Leader(ctx)
	require.NoError(t, err)

	require.NoError(t, c.Server(old).Pause())
	require.NoError(t, c.WaitReady(ctx), "paused servers are not waited for")
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.NotEqual(t, old, leader)

	// Once resumed, the old leader notices it lost its followers and rejoins.
	require.NoError(t, c.Server(old).Resume())
	eventually(t, "old leader rejoins as follower", func() error {
		out, err := c.FourLetter(ctx, old, "srvr")
		if err == nil && !strings.Contains(out, "Mode: follower") {
			return fmt.Errorf("srvr says %q", out)
		}
		return err
	})
	require.NoError(t, c.WaitReady(ctx))
}
