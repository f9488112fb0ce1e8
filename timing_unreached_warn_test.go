package zklock_test

import (
	"context"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// Issue 47, a newcomer's pass: servers [live standalone, dead] with
// WithEnsembleTiming logged "servers do not answer 'conf' ... refusing=[]
// unreached=[dead]", though the live one answers 'conf'. The WARN says
// what happened: the dead one was not reached, and the stated timing is
// used because it might be a follower; Timing's Source is "stated".
func TestStatedTimingWarnNamesUnreached(t *testing.T) {
	t.Parallel()
	live, dead := shared(t).Servers()[0], refusedAddr(t)
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var logs syncBuffer
	s, err := zklock.NewSession(ctx, zklock.WithServers(live, dead), zklock.WithEnsembleTiming(100*time.Millisecond, 5),
		zklock.WithLogger(slog.New(slog.NewTextHandler(&logs, nil))))
	require.NoError(t, err)
	defer s.Close()
	require.Equal(t, "stated", s.Client().Timing().Source)
	var warn string
	eventually(t, 10*time.Second, "the WARN", func() bool { // the log is written by a goroutine of the Session's
		for _, l := range strings.Split(logs.text(), "\n") {
			if strings.Contains(l, "level=WARN") && strings.Contains(l, "rests on WithEnsembleTiming") {
				warn = l
			}
		}
		return warn != ""
	})
	require.NotContains(t, warn, "do not answer 'conf'", "the live server answers 'conf'")
	require.Contains(t, warn, dead)
	require.Contains(t, warn, "not reached")
	require.Contains(t, warn, "follower")
}
