package session

import (
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// A follower restarted with a syncLimit that leaves the session no time to
// hold (50×100ms against a 4s timeout) is learned at the reconnect: the
// epoch ends, and none begins while the timing stays so; once the server
// tells a safe timing again, an epoch begins.
func TestScriptedTimingChangeEndsAndResumes(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("follower", confQuorum)
	c, sts := dialScripted(t, srv)
	own := c.Ownership()
	require.Equal(t, 10, c.sv.Load().timing.SyncLimit)

	srv.script(func(s *zkServer) { s.conf = strings.Replace(confQuorum, "syncLimit=10", "syncLimit=50", 1) })
	srv.cut()
	within(t, own) // the epoch ends at the reconnect, not at its deadline
	require.Equal(t, 50, c.sv.Load().timing.SyncLimit)
	require.ErrorIs(t, c.timingErr(c.sv.Load()), ErrInvalid)
	sts.await(t, StateLost, 1)
	sts.await(t, StateReconnected, 1) // connected again, on the unsafe timing:
	require.Nil(t, c.live.Load(), "an epoch began on a timing that leaves no safe deadline")
	require.Equal(t, StateLost, c.State())

	srv.script(func(s *zkServer) { s.conf = confQuorum })
	srv.cut()
	sts.await(t, StateReconnected, 2) // the second reconnect, and a new epoch
	require.Eventually(t, func() bool { return c.live.Load() != nil }, 10*time.Second, 10*time.Millisecond)
	require.Equal(t, 10, c.sv.Load().timing.SyncLimit)
	t.Log(sts.list())
}
