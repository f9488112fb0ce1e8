package session

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// TrackDir on a real server: trackings of one directory share one
// persistent recursive watch; each hears of every deletion of a child
// after it began, and of nothing else (a data change, a deeper node); the
// watch is removed once nobody has tracked there for the linger, and set
// again by the next TrackDir.
func TestTrackDirOnServer(t *testing.T) {
	zk, c, other, ctx := trackPair(t, 300*time.Millisecond, 30*time.Second)
	dir := "/track"
	require.NoError(t, other.CreateContainer(ctx, dir))
	// sub is persistent, not a container: the server deletes an empty
	// container about a second after its last child goes (checkIntervalMs
	// 1000), a deletion the trackings must report; under load that came
	// before the test's next step (make test at load 22: "sub" among the
	// deletions).
	_, _, err := other.Client().Create(ctx, dir+"/sub", nil, client.ModePersistent, client.WorldACL(client.PermAll))
	require.NoError(t, err)
	var nodes []string
	for range 3 {
		name, _, _, err := other.CreateSeq(ctx, dir+"/_c_x-n-", nil)
		require.NoError(t, err)
		nodes = append(nodes, name)
	}
	deep, _, _, err := other.CreateSeq(ctx, dir+"/sub/_c_y-n-", nil)
	require.NoError(t, err)
	watches := func() []string {
		ws, err := zk.Watches(ctx)
		require.NoError(t, err)
		return ws[c.SessionID()]
	}
	next1, stop1, sid, err := c.TrackDir(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, c.SessionID(), sid)
	next2, stop2, _, err := c.TrackDir(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, []string{dir}, watches(), "one watch, on the directory, for both trackings")

	require.NoError(t, other.SetData(ctx, nodes[0], []byte("1"), -1)) // not a deletion
	require.NoError(t, other.Delete(ctx, deep))                       // not a child
	require.NoError(t, other.Delete(ctx, nodes[0]))
	require.NoError(t, other.Delete(ctx, nodes[1]))
	for _, next := range []func(context.Context) ([]string, bool, error){next1, next2} {
		var got []string
		for len(got) < 2 {
			gone, look, err := next(ctx)
			require.NoError(t, err)
			require.False(t, look)
			got = append(got, gone...)
		}
		require.Equal(t, []string{nodes[0][len(dir)+1:], nodes[1][len(dir)+1:]}, got, "the deletions, in order, and nothing else")
	}
	stop2()
	require.NoError(t, other.Delete(ctx, nodes[2]))
	gone, look, err := next1(ctx)
	require.NoError(t, err)
	require.False(t, look)
	require.Equal(t, []string{nodes[2][len(dir)+1:]}, gone)
	stop1()

	deadline := time.Now().Add(10 * time.Second)
	for len(watches()) > 0 { // nobody tracks: the tree goes after the linger
		require.True(t, time.Now().Before(deadline), "the idle tree's watch stays: %v", watches())
		time.Sleep(50 * time.Millisecond)
	}
	next1, stop1, _, err = c.TrackDir(ctx, dir)
	require.NoError(t, err)
	defer stop1()
	require.Equal(t, []string{dir}, watches(), "set again by the next TrackDir")
	name, _, _, err := other.CreateSeq(ctx, dir+"/_c_x-n-", nil)
	require.NoError(t, err)
	require.NoError(t, other.Delete(ctx, name))
	gone, look, err = next1(ctx)
	require.NoError(t, err)
	require.False(t, look)
	require.Equal(t, []string{name[len(dir)+1:]}, gone)
}

// trackPair starts a server and dials two sessions on it, both tracking as on 3.9
// (on this repository's 3.8, nothing else of theirs watches the tracked
// directories), c's trees lingering linger; ctx ends within bound.
func trackPair(t *testing.T, linger, bound time.Duration) (zk *zktest.Cluster, c, other *Conn, ctx context.Context) {
	t.Helper()
	zk = zktest.Start(t)
	c, other = dialTest(t, zk.Servers()), dialTest(t, zk.Servers())
	c.AssumeWatchModes()
	other.AssumeWatchModes()
	c.linger = linger
	ctx, cancel := context.WithTimeout(t.Context(), bound)
	t.Cleanup(cancel)
	return zk, c, other, ctx
}
