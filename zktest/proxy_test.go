package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"

	"github.com/zklock/zklock/zktest"
)

// proxied starts a server and a client connected to it through a proxy.
// The session timeout is long enough that the short faults below neither
// expire the session nor make the client give up on its connection.
func proxied(t *testing.T) (*zktest.Cluster, *zktest.Proxy, *client.Client, *recorder) {
	t.Helper()
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	p := zktest.NewProxy(t, c.Servers())
	require.Len(t, p.Addrs(), 1)
	conn, rec := connect(t, p.Addrs(), 15*time.Second)
	return c, p, conn, rec
}

func TestProxyForwards(t *testing.T) {
	t.Parallel()
	_, p, conn, _ := proxied(t)
	_, _, err := conn.Create(reqCtx(t), "/through", []byte("proxy"), client.ModePersistent, openACL)
	require.NoError(t, err)
	data, _, err := conn.Get(reqCtx(t), "/through")
	require.NoError(t, err)
	assert.Equal(t, "proxy", string(data))
	conns, up, down := p.Stats()
	assert.Equal(t, 1, conns)
	assert.Positive(t, up)
	assert.Positive(t, down)
}

func TestProxyBlackholeHeal(t *testing.T) {
	t.Parallel()
	_, p, conn, _ := proxied(t)
	_, _, err := conn.Create(reqCtx(t), "/bh", []byte("x"), client.ModePersistent, openACL)
	require.NoError(t, err)

	p.Blackhole()
	result := make(chan error, 1)
	go func() {
		_, _, err := conn.Get(reqCtx(t), "/bh")
		result <- err
	}()
	select {
	case err := <-result:
		t.Fatalf("a request through a blackhole returned: %v", err)
	case <-time.After(time.Second):
	}
	p.Heal()
	select {
	case err := <-result:
		require.NoError(t, err, "the held request completes after Heal")
	case <-time.After(waitLimit):
		t.Fatal("no reply after Heal")
	}
}

func TestProxyReset(t *testing.T) {
	t.Parallel()
	_, p, conn, rec := proxied(t)
	p.Reset()
	rec.waitCount(t, client.StateDisconnected, 1)
	rec.waitCount(t, client.StateConnected, 2)
	_, _, err := conn.Exists(reqCtx(t), "/")
	require.NoError(t, err)
	conns, _, _ := p.Stats()
	assert.GreaterOrEqual(t, conns, 2, "the client reconnected through the proxy")
}

func TestProxyRefuse(t *testing.T) {
	t.Parallel()
	_, p, conn, rec := proxied(t)
	p.Refuse(true)
	p.Reset()
	rec.waitCount(t, client.StateDisconnected, 1)
	// Refused reconnections are counted; the session is not back.
	eventually(t, "refused reconnection", func() error {
		if conns, _, _ := p.Stats(); conns < 2 {
			return errors.New("no reconnection yet")
		}
		return nil
	})
	if n, _ := rec.count(client.StateConnected); n != 1 {
		t.Fatalf("session re-established %d times while refusing", n-1)
	}
	p.Refuse(false)
	rec.waitCount(t, client.StateConnected, 2)
	_, _, err := conn.Exists(reqCtx(t), "/")
	require.NoError(t, err)
}

func TestProxyLatency(t *testing.T) {
	t.Parallel()
	_, p, conn, _ := proxied(t)
	const latency = 200 * time.Millisecond
	p.SetLatency(latency)
	began := time.Now()
	_, _, err := conn.Exists(reqCtx(t), "/")
	require.NoError(t, err)
	// Only a lower bound: a busy machine may add any amount on top.
	assert.GreaterOrEqual(t, time.Since(began), 2*latency, "one delay each way")
	p.Heal()
	_, _, err = conn.Exists(reqCtx(t), "/")
	require.NoError(t, err)
}

func TestProxyResetAfterRequest(t *testing.T) {
	t.Parallel()
	c, p, conn, rec := proxied(t)
	const opCreate2 = 15 // zklock's client creates with create2
	p.ResetAfterRequest(func(op int32) bool { return op == opCreate2 })

	// Reads pass untouched while a create is awaited.
	_, _, err := conn.Exists(reqCtx(t), "/")
	require.NoError(t, err)
	_, _, err = conn.Create(reqCtx(t), "/lost-reply", []byte("x"), client.ModePersistent, openACL)
	require.ErrorIs(t, err, client.ErrConnectionLoss, "the reply was lost")
	rec.waitCount(t, client.StateConnected, 2)

	// The server did perform it: the node is there, seen directly.
	direct, _ := connect(t, c.Servers(), 4*time.Second)
	data, _, err := direct.Get(reqCtx(t), "/lost-reply")
	require.NoError(t, err)
	assert.Equal(t, "x", string(data))

	// One-shot: the next create goes through.
	_, _, err = conn.Create(reqCtx(t), "/second", nil, client.ModePersistent, openACL)
	require.NoError(t, err)
}

func TestProxyOnly(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3)
	p := zktest.NewProxy(t, c.Servers())
	conn, rec := connect(t, p.Addrs(), 5*time.Second)
	ctx := context.Background()
	for _, i := range []int{2, 0} { // each time the client must end up on server i
		p.Only(i)
		eventually(t, "the session on the only reachable server", func() error {
			cons, err := c.FourLetter(ctx, i, "cons")
			if err != nil {
				return err
			}
			if !strings.Contains(cons, fmt.Sprintf("sid=0x%x", conn.SessionID())) {
				return fmt.Errorf("server %d has no connection of session 0x%x", i, conn.SessionID())
			}
			return nil
		})
		_, _, err := conn.Exists(reqCtx(t), "/")
		require.NoError(t, err)
		for j := range 3 {
			if j == i {
				continue
			}
			cons, err := c.FourLetter(ctx, j, "cons")
			require.NoError(t, err)
			require.NotContains(t, cons, fmt.Sprintf("sid=0x%x", conn.SessionID()), "server %d still serves the client", j)
		}
		p.Heal()
	}
	n, _ := rec.count(client.StateExpired)
	require.Zero(t, n, "moving between servers kept the session")
}
