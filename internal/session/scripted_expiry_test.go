package session

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
)

// The server answers a reconnect with "session expired": the epoch ends at
// once (Ownership closed), before a new session is
// established; the old epoch's requests give up (errStopped), a create
// queued in the old session fails with ErrSessionExpired (creates are not
// retried), a read queued then runs in the new session, and the node the
// old epoch tracked is not deleted by the client (the server took it with
// the session).
func TestScriptedExpiry(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, sts := dialScripted(t, srv)
	ctx := t.Context()
	sid := c.SessionID()
	require.NoError(t, c.CreateContainer(ctx, "/d"))
	node, _, _, err := c.CreateSeq(ctx, "/d/_c_x-lock-", nil)
	require.NoError(t, err)
	old, err := c.Epoch(ctx)
	require.NoError(t, err)
	require.True(t, c.Track(old, &Tracked{Path: node}))

	resume, fresh := make(chan struct{}), make(chan struct{})
	srv.script(func(s *zkServer) {
		s.holdCn = func(id int64) <-chan struct{} {
			if id == 0 {
				return fresh
			}
			return resume
		}
	})
	e.expire(sid)
	srv.cut()
	sts.await(t, StateSuspended, 1)
	made, listed, deleted := make(chan error, 1), make(chan error, 1), make(chan error, 1)
	go func() { _, _, _, err := c.CreateSeq(ctx, "/d/_c_y-lock-", nil); made <- err }()
	go func() { _, err := c.Children(ctx, "/d"); listed <- err }()
	go func() { deleted <- c.DeleteUntil(ctx, "/d/other", old) }()
	e.await(t, "a second attempt to resume", func() bool { return e.connectsFor(sid) >= 2 })
	close(resume) // answered: expired

	sts.await(t, StateExpired, 1)
	select {
	case <-old.Done:
	default:
		t.Fatal("the epoch outlived its session's expiry")
	}
	select {
	case <-c.Ownership():
	default:
		t.Fatal("Ownership is open with no session")
	}
	require.True(t, c.OwnershipDeadline().Before(time.Now()),
		"the ownership deadline is %v ahead after the session expired", time.Until(c.OwnershipDeadline()))
	require.False(t, c.Track(old, &Tracked{Path: "/d/late"}), "a node tracked with an expired epoch")
	require.ErrorIs(t, within(t, made), client.ErrSessionExpired)
	require.ErrorIs(t, within(t, deleted), errStopped)

	close(fresh)
	next := sts.await(t, StateConnected, 2)
	require.NotEqual(t, sid, next.sid, "a new session")
	require.Equal(t, next.sid, c.SessionID())
	require.NoError(t, within(t, listed), "a read queued in the old session runs in the new one")
	ep, err := c.Epoch(ctx)
	require.NoError(t, err)
	require.Equal(t, next.sid, ep.SessionID)
	require.True(t, c.OwnershipDeadline().After(time.Now()))
	for _, r := range e.seen(opDelete) {
		require.NotEqual(t, node, r.path, "the client deleted a node its expired session owned")
	}
	require.Equal(t, []string{"/d"}, e.paths(), "the expired session's node is gone, nothing else was made")
}
