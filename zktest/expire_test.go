package zktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"

	"github.com/zklock/zklock/zktest"
)

func TestExpireSession(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	p := zktest.NewProxy(t, c.Servers())
	// Asks for more than the server's maximum (2s by default) and gets it.
	conn, rec := connect(t, p.Addrs(), 10*time.Second)
	_, _, err := conn.Create(reqCtx(t), "/mine", nil, client.ModeEphemeral, openACL)
	require.NoError(t, err)
	observer, _ := connect(t, c.Servers(), 2*time.Second)

	ctx := context.Background()
	id := conn.SessionID()
	alive, err := c.SessionAlive(ctx, id)
	require.NoError(t, err)
	require.True(t, alive)

	require.NoError(t, zktest.ExpireSession(ctx, c, p, id))
	alive, err = c.SessionAlive(ctx, id)
	require.NoError(t, err)
	assert.False(t, alive)
	_, exists, err := observer.Exists(reqCtx(t), "/mine")
	require.NoError(t, err)
	assert.False(t, exists, "the expired session's ephemeral node is gone")

	// Healed, the client learns its session expired, then gets a new one.
	rec.waitCount(t, client.StateExpired, 1)
	rec.waitCount(t, client.StateConnected, 2)
	assert.NotEqual(t, id, conn.SessionID())
}

func TestExpireSessionEnsemble(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3)
	p := zktest.NewProxy(t, c.Servers())
	require.Len(t, p.Addrs(), 3)
	conn, rec := connect(t, p.Addrs(), 2*time.Second)
	_, _, err := conn.Create(reqCtx(t), "/mine", nil, client.ModeEphemeral, openACL)
	require.NoError(t, err)

	ctx := context.Background()
	require.NoError(t, zktest.ExpireSession(ctx, c, p, conn.SessionID()))
	rec.waitCount(t, client.StateExpired, 1)
	rec.waitCount(t, client.StateConnected, 2)
	_, exists, err := conn.Exists(reqCtx(t), "/mine")
	require.NoError(t, err)
	assert.False(t, exists)
}

func TestWaitSessionExpiredHonoursContext(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	conn, _ := connect(t, c.Servers(), 2*time.Second)
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err := c.WaitSessionExpired(ctx, conn.SessionID())
	require.ErrorIs(t, err, context.DeadlineExceeded, "a live session does not expire")
}
