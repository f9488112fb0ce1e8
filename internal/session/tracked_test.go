package session

import (
	"slices"
	"testing"

	"github.com/stretchr/testify/require"
)

// An epoch lists its tracked nodes without a map: an untracked node's slot
// takes the last one, and each node keeps knowing its slot, so any order
// of Untrack leaves exactly the others listed; a node tracked twice is
// listed once.
func TestTrackedList(t *testing.T) {
	c := newEvidenceConn(t)
	c.mu.Lock()
	c.sid, c.state = 0x10, StateConnected
	c.newEpochLocked()
	ep := c.ep
	c.mu.Unlock()
	ns := make([]*Tracked, 6)
	for i := range ns {
		ns[i] = &Tracked{Path: string(rune('a' + i))}
		require.True(t, c.track(ep, ns[i]))
	}
	require.True(t, c.track(ep, ns[2]), "tracked again")
	listed := func() []string {
		c.mu.Lock()
		defer c.mu.Unlock()
		var out []string
		for i, n := range ep.nodes {
			require.Equal(t, int32(i+1), n.at, "%s does not know its slot", n.Path)
			out = append(out, n.Path)
		}
		slices.Sort(out)
		return out
	}
	require.Equal(t, []string{"a", "b", "c", "d", "e", "f"}, listed())
	c.untrack(ep, ns[1])
	c.untrack(ep, ns[0])
	c.untrack(ep, ns[0]) // twice: nothing more goes
	c.untrack(ep, ns[5])
	require.Equal(t, []string{"c", "d", "e"}, listed())
	require.True(t, c.track(ep, ns[0]))
	require.Equal(t, []string{"a", "c", "d", "e"}, listed())
	// ep ends (endEpochLocked deletes what end returns): it hands over
	// exactly the nodes listed, and takes nothing more.
	var ended []string
	for _, n := range ep.end() {
		require.Zero(t, n.at, "%s still knows a slot", n.Path)
		ended = append(ended, n.Path)
	}
	slices.Sort(ended)
	require.Equal(t, []string{"a", "c", "d", "e"}, ended)
	require.False(t, c.track(ep, ns[1]))
	require.Empty(t, listed())
}
