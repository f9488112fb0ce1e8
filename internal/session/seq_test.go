package session

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// The sequence layout's requests: the parent's child count answered right
// after the create, counting it, and a pipeline of exists requests that
// tells which nodes exist, a missing one being no error.
func testCreateAndStat(t *testing.T, zk *zktest.Cluster) {
	c := dialTest(t, zk.Servers())
	ctx := t.Context()
	dir := "/cas/a"
	parents := []string{"/cas", dir}
	first, czxid, owner, n, parent, err := c.CreateAndStat(ctx, parents, dir+"/seqlock-", []byte("d"))
	require.NoError(t, err)
	_, dst, err := c.get(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, dst.Czxid, parent, "the parent's czxid, read behind the create")
	require.True(t, strings.HasPrefix(first, dir+"/seqlock-"), first)
	require.Equal(t, int32(1), n, "the parent's children after the create")
	_, st, err := c.get(ctx, first)
	require.NoError(t, err)
	require.Equal(t, st.Czxid, czxid)
	require.Equal(t, c.SessionID(), owner)
	second, _, _, n, _, err := c.CreateAndStat(ctx, parents, dir+"/seqlock-", nil)
	require.NoError(t, err)
	require.Equal(t, int32(2), n)

	ex, err := c.Exist(ctx, []string{second, dir + "/seqlock-none", first, "/cas/missing/x"})
	require.NoError(t, err)
	require.Equal(t, []bool{true, false, true, false}, ex)
	require.NoError(t, c.Delete(ctx, first))
	ex, err = c.Exist(ctx, []string{first, second})
	require.NoError(t, err)
	require.Equal(t, []bool{false, true}, ex)

	// A parent reaped under a cached entry: NoNode, as CreateAndList.
	require.NoError(t, c.Delete(ctx, second))
	require.NoError(t, c.Delete(ctx, dir))
	_, _, _, _, _, err = c.CreateAndStat(ctx, parents, dir+"/seqlock-", nil)
	require.ErrorIs(t, err, client.ErrNoNode)
	_, _, _, n, parent, err = c.CreateAndStat(ctx, parents, dir+"/seqlock-", nil)
	require.NoError(t, err)
	require.Equal(t, int32(1), n)
	_, nst, err := c.get(ctx, dir)
	require.NoError(t, err)
	require.Equal(t, nst.Czxid, parent, "the re-created parent's czxid")
	require.Greater(t, parent, dst.Czxid)
}
