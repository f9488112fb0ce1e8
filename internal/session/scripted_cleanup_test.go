package session

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// holdCreates holds the answer of every create under /d/ until release,
// then does what then says.
func holdCreates(srv *zkServer, release <-chan struct{}, then step) {
	srv.script(func(s *zkServer) {
		s.hook = func(r *seenReq) (<-chan struct{}, step) {
			if r.op == opCreate2 && strings.HasPrefix(r.path, "/d/") {
				return release, then
			}
			return nil, answer
		}
	})
}

// abandon starts a CreateSeq under /d, waits until the server has it,
// gives up on it (cancels its ctx) and lets the server go on with it.
func abandon(t *testing.T, e *ensemble, c *Conn, release chan struct{}) error {
	ctx, cancel := context.WithCancel(t.Context())
	made := make(chan error, 1)
	go func() { _, _, _, err := c.CreateSeq(ctx, "/d/_c_x-lock-", nil); made <- err }()
	e.await(t, "the create", func() bool { return len(e.seenLocked(opCreate2)) == 1 })
	cancel()
	close(release)
	return within(t, made)
}

// awaitOnly waits until the tree holds just want.
func awaitOnly(t *testing.T, e *ensemble, want ...string) {
	e.await(t, "the tree to hold only "+strings.Join(want, ", "), func() bool {
		var ps []string
		for p := range e.nodes {
			if p != "/" {
				ps = append(ps, p)
			}
		}
		slices.Sort(ps)
		return slices.Equal(ps, want)
	})
}

// A create whose caller gave up and whose reply came afterwards: the node
// it made is deleted.
func TestScriptedAbandonedCreateDeleted(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, _ := dialScripted(t, srv)
	require.NoError(t, c.CreateContainer(t.Context(), "/d"))
	release := make(chan struct{})
	holdCreates(srv, release, answer)
	require.ErrorIs(t, abandon(t, e, c, release), context.Canceled)
	awaitOnly(t, e, "/d")
	dels := e.seen(opDelete)
	require.Len(t, dels, 1)
	require.True(t, strings.HasPrefix(dels[0].path, "/d/_c_x-lock-"), dels[0].path)
}

// A create whose caller gave up, made by the server but its reply lost to
// a connection cut: its outcome is unknown, so after the reconnect the
// session lists the parent and deletes the node by its protected name.
func TestScriptedAbandonedCreateCutDeleted(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, sts := dialScripted(t, srv)
	require.NoError(t, c.CreateContainer(t.Context(), "/d"))
	release := make(chan struct{})
	holdCreates(srv, release, cutAfter)
	require.ErrorIs(t, abandon(t, e, c, release), context.Canceled)
	sts.await(t, StateReconnected, 1)
	awaitOnly(t, e, "/d")
	dels := e.seen(opDelete)
	require.Len(t, dels, 1)
	require.Equal(t, 1, dels[0].conn, "deleted on the next connection")
	require.True(t, strings.HasPrefix(dels[0].path, "/d/_c_x-lock-"), dels[0].path)
}

// A node tracked with an epoch that ended at its deadline (no replies)
// while the session survived is deleted once the client is back in the
// same session: it would otherwise block others although its holder was
// told it lost it.
func TestScriptedTrackedNodeDeletedAfterEpoch(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, sts := dialScripted(t, srv)
	ctx := t.Context()
	require.NoError(t, c.CreateContainer(ctx, "/d"))
	node, _, _, err := c.CreateSeq(ctx, "/d/_c_x-lock-", nil)
	require.NoError(t, err)
	ep, err := c.Epoch(ctx)
	require.NoError(t, err)
	require.True(t, c.Track(ep, &Tracked{Path: node}))
	release := silence(t, srv)
	sts.await(t, StateLost, 1)
	require.Equal(t, []string{"/d", node}, sortedPaths(e), "deleted while no reply came")
	release()
	sts.await(t, StateReconnected, 1)
	awaitOnly(t, e, "/d")
	require.Equal(t, ep.SessionID, c.SessionID(), "the session survived")
}

func sortedPaths(e *ensemble) []string {
	ps := e.paths()
	slices.Sort(ps)
	return ps
}
