package zklock_test

import (
	"context"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// Issue 47, a newcomer's pass: Observe's doc blamed go-zookeeper for
// leaving a watch behind, but zklock's own client can remove watches. What
// is true: Observe does not remove the watch it set when its ctx ends; it
// stays on the server until it fires (here, the leader resigns).
func TestObserveWatchStaysUntilItFires(t *testing.T) {
	src, err := os.ReadFile("election_observe.go")
	require.NoError(t, err)
	require.False(t, strings.Contains(string(src), "go-zookeeper"), "Observe's doc names a client zklock no longer uses")

	c := standalone(t)
	ctx := ctxFor(t)
	p := lockPath(t, "e")
	ss := manySessions(t, c.Servers(), 2)
	leader, err := zklock.NewElection(ss[0], p)
	require.NoError(t, err)
	_, err = leader.Campaign(ctx, []byte("web1"))
	require.NoError(t, err)
	const base int64 = 1 // the leader's Term watches its own node
	awaitWatches(t, c, base)

	observer, err := zklock.NewElection(ss[1], p)
	require.NoError(t, err)
	octx, cancel := context.WithCancel(ctx)
	ch, err := observer.Observe(octx)
	require.NoError(t, err)
	info := <-ch
	require.True(t, strings.HasSuffix(info.Node, "lock-0000000000"), "leader %+v", info)
	awaitWatches(t, c, base+1)
	cancel()
	for range ch { // closed once Observe has stopped
	}
	n, err := c.WatchCount(ctx)
	require.NoError(t, err)
	require.Equal(t, base+1, n, "Observe's watch is still set after its ctx ended")

	require.NoError(t, leader.Resign(ctx))
	eventually(t, 10*time.Second, "the watches to fire", func() bool {
		n, err := c.WatchCount(ctx)
		return err == nil && n == 0
	})
}
