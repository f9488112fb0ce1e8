package zklock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// Issue 47: after Session.Close a leader's Term said "leadership lost",
// as if a rival could have taken over while the program still ran; it
// says the session was closed (ErrSessionClosed), through Err, the cause
// of Context and Resign, and still counts as a loss (ErrLockLost)
// for code that handles every end of a term alike.
func TestTermAfterSessionCloseSaysClosed(t *testing.T) {
	t.Parallel()
	zk := shared(t)
	s, err := zklock.NewSession(ctxFor(t), zklock.WithServers(zk.Servers()...), zklock.WithSessionTimeout(2*time.Second))
	require.NoError(t, err)
	e, err := zklock.NewElection(s, lockPath(t, "leader"))
	require.NoError(t, err)
	term, err := e.Campaign(ctxFor(t), []byte("a"))
	require.NoError(t, err)
	tctx, cancel := term.Context(context.Background())
	defer cancel()

	require.NoError(t, s.Close())
	select {
	case <-term.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("the term's Lost did not close within 5s of Session.Close")
	}
	<-tctx.Done()
	for what, err := range map[string]error{
		"Err":                 term.Err(),
		"the Context's cause": context.Cause(tctx),
		"Resign":              e.Resign(ctxFor(t)),
	} {
		require.ErrorIs(t, err, zklock.ErrSessionClosed, what)
		require.ErrorIs(t, err, zklock.ErrLockLost, what)
		require.Contains(t, err.Error(), "session closed", what)
		require.False(t, strings.Contains(err.Error(), "leadership lost"), "%s: %q", what, err)
	}
}
