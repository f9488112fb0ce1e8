package zktest_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"

	"github.com/zklock/zklock/zktest"
)

// TestWatchCount pins what WatchCount counts: one watch per path and
// session for data and exists watches together, one more for a child
// watch, none once fired; and that a four-letter command counts as a
// packet received, which a test polling it while it counts requests must
// subtract.
func TestWatchCount(t *testing.T) {
	t.Parallel()
	// Sessions of a minute ping every 20s: none lands among the counted
	// packets.
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, time.Minute))
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	a, _ := connect(t, c.Servers(), time.Minute)
	b, _ := connect(t, c.Servers(), time.Minute)
	count := func() int64 {
		t.Helper()
		n, err := c.WatchCount(ctx)
		require.NoError(t, err)
		return n
	}
	require.Zero(t, count())
	_, _, err := a.Create(reqCtx(t), "/w", nil, client.ModePersistent, openACL)
	require.NoError(t, err)

	packets, err := c.MntrSum(ctx, "zk_packets_received")
	require.NoError(t, err)
	_, _, fired, err := a.GetW(reqCtx(t), "/w")
	require.NoError(t, err)
	_, _, _, err = a.ExistsW(reqCtx(t), "/w")
	require.NoError(t, err)
	_, _, _, err = a.ChildrenW(reqCtx(t), "/w")
	require.NoError(t, err)
	_, _, _, err = b.GetW(reqCtx(t), "/w")
	require.NoError(t, err)
	after, err := c.MntrSum(ctx, "zk_packets_received")
	require.NoError(t, err)
	require.Equal(t, packets+4+1, after, "the four watch requests and the mntr that read the count")
	require.Equal(t, int64(3), count(),
		"one watch for a's data and exists watches together, one for a's child watch, one for b's")

	_, err = b.Set(reqCtx(t), "/w", []byte("x"), -1)
	require.NoError(t, err)
	select {
	case <-fired.Ready():
		ev, err := fired.Next(ctx)
		require.NoError(t, err)
		require.Equal(t, client.EventNodeDataChanged, ev.Type)
	case <-ctx.Done():
		t.Fatal("the data watch did not fire")
	}
	require.Equal(t, int64(1), count(), "fired data watches are gone; the child watch stays")
}
