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

// KnownCzxid: the handles of a session that all lock a path for the first
// time at once send one read of its czxid between them, not one each;
// later calls read nothing; a create's pipelined look at its parent keeps
// it current; ReadCzxid reads again, and a missing dir is 0; KnownCzxid
// makes a missing path.
func testKnownCzxid(t *testing.T, zk *zktest.Cluster) {
	px := zktest.NewProxy(t, zk.Servers())
	c := dialTest(t, px.Addrs())
	ctx := t.Context()
	for _, d := range []string{"/kc", "/kc/one", "/kc/two"} {
		require.NoError(t, c.createContainer(ctx, d))
	}
	up := func() int64 { _, b, _ := px.Stats(); return b }
	z, err := c.ReadCzxid(ctx, "/kc/one")
	require.NoError(t, err)
	// The bytes of one read of "/kc/two" (getData: length, xid, op,
	// path, watch): the proxy's count may lag a reply already read, so it
	// is not measured.
	one := int64(4 + 4 + 4 + 4 + len("/kc/two") + 1)
	_, st, err := c.get(ctx, "/kc/one")
	require.NoError(t, err)
	require.Equal(t, st.Czxid, z)

	const n = 20
	start := make(chan struct{})
	got := make([]int64, n)
	errc := make(chan error, n)
	before := up()
	for i := range n {
		go func() {
			<-start
			var err error
			got[i], err = c.KnownCzxid(ctx, []string{"/kc", "/kc/two"})
			errc <- err
		}()
	}
	close(start)
	for range n {
		require.NoError(t, <-errc)
	}
	sent := up() - before
	_, st, err = c.get(ctx, "/kc/two")
	require.NoError(t, err)
	for i := range n {
		require.Equal(t, st.Czxid, got[i], "call %d", i)
	}
	require.Less(t, sent, 2*one+24, "%d concurrent first calls sent %d bytes; one read is %d", n, sent, one)

	before = up()
	again, err := c.KnownCzxid(ctx, []string{"/kc", "/kc/two"})
	require.NoError(t, err)
	require.Equal(t, st.Czxid, again)
	require.Less(t, up()-before, int64(13), "a known czxid is read again")

	// The path re-created: a create's look at the parent tells the new one.
	require.NoError(t, c.Delete(ctx, "/kc/two"))
	require.NoError(t, c.createContainer(ctx, "/kc/two"))
	_, _, _, _, parent, err := c.CreateAndStat(ctx, []string{"/kc", "/kc/two"}, "/kc/two/seqlock-", nil)
	require.NoError(t, err)
	require.Greater(t, parent, st.Czxid)
	again, err = c.KnownCzxid(ctx, []string{"/kc", "/kc/two"})
	require.NoError(t, err)
	require.Equal(t, parent, again)
	missing, err := c.ReadCzxid(ctx, "/kc/none")
	require.NoError(t, err)
	require.Zero(t, missing)

	// A missing path is made (with its missing parents), then read.
	made, err := c.KnownCzxid(ctx, []string{"/kc2", "/kc2/a", "/kc2/a/b"})
	require.NoError(t, err)
	_, st, err = c.get(ctx, "/kc2/a/b")
	require.NoError(t, err)
	require.Equal(t, st.Czxid, made)
}
