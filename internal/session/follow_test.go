package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/zktest"
)

// Follow on a real server: follows in one directory share one persistent
// recursive watch; a follow sees its node's data changes (Released on an
// announcing node) and deletion, and nothing of its neighbours; the watch
// is removed once nobody has followed there for the linger, and set again
// by the next Follow.
func TestFollowOnServer(t *testing.T) {
	zk := zktest.Start(t)
	c := dialTest(t, zk.Servers())
	other := dialTest(t, zk.Servers())
	c.linger = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(t.Context(), 30*time.Second)
	defer cancel()
	dir := "/follow"
	require.NoError(t, other.CreateContainer(ctx, dir))
	var nodes []string
	for range 2 {
		name, _, _, err := other.CreateSeq(ctx, dir+"/_c_x-n-", []byte(testAnnouncer))
		require.NoError(t, err)
		nodes = append(nodes, name)
	}
	watches := func() []string {
		ws, err := zk.Watches(ctx)
		require.NoError(t, err)
		return ws[c.SessionID()]
	}
	data, ok, next0, stop0, err := c.Follow(ctx, dir, nodes[0])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, testAnnouncer, string(data))
	_, ok, next1, stop1, err := c.Follow(ctx, dir, nodes[1])
	require.NoError(t, err)
	require.True(t, ok)
	require.Equal(t, []string{dir}, watches(), "one watch, on the directory, for both follows")
	_, ok, _, _, err = c.Follow(ctx, dir, dir+"/gone")
	require.NoError(t, err)
	require.False(t, ok, "a node that does not exist")

	for range 2 { // a persistent watch: each write is seen, with no request between
		require.NoError(t, other.SetData(ctx, nodes[0], []byte("1"+testAnnouncer), -1))
		ch, err := next0(ctx)
		require.NoError(t, err)
		require.Equal(t, Released, ch)
	}
	require.NoError(t, other.Delete(ctx, nodes[0]))
	ch, err := next0(ctx)
	require.NoError(t, err)
	require.Equal(t, Deleted, ch)
	stop0()
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	_, err = next1(short) // its neighbour's changes are not its own
	cancelShort()
	require.ErrorIs(t, err, context.DeadlineExceeded)
	stop1()

	deadline := time.Now().Add(10 * time.Second)
	for len(watches()) > 0 { // nobody follows: the tree goes after the linger
		require.True(t, time.Now().Before(deadline), "the idle tree's watch stays: %v", watches())
		time.Sleep(50 * time.Millisecond)
	}
	_, ok, next1, stop1, err = c.Follow(ctx, dir, nodes[1])
	require.NoError(t, err)
	require.True(t, ok)
	defer stop1()
	require.Equal(t, []string{dir}, watches(), "set again by the next Follow")
	require.NoError(t, other.Delete(ctx, nodes[1]))
	ch, err = next1(ctx)
	require.NoError(t, err)
	require.Equal(t, Deleted, ch)
}
