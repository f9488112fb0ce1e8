package session

import (
	"context"
	"log/slog"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
)

// A session whose survey found no server serving (every 'srvr' said "not
// currently serving", as while an ensemble elects a leader, so no 'conf'
// was asked) learns the timing from the server it reached, which serves
// by then, rather than refusing the session on ZooKeeper's sample
// configuration (tick 2s, syncLimit 5: a 4s session is refused).
// TestMutexKeptThroughEnsembleLeaderKill failed that way in CI: a session
// made right after the leader was killed was refused.
func TestScriptedSurveyDuringElection(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server(modeElecting, confQuorum)
	cfg := Config{
		Servers: []string{srv.addr()},
		Timeout: 4 * time.Second,
		Logger:  slog.New(slog.DiscardHandler),
		ACL:     client.WorldACL(client.PermAll),
		Backoff: func() backoff.BackOff { return backoff.NewConstantBackOff(10 * time.Millisecond) },
		Timing:  Timing{Tick: 2 * time.Second, SyncLimit: 5}, // ZooKeeper's sample, not set by the caller
	}
	ctx, cancel := context.WithTimeout(t.Context(), 20*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	require.NoError(t, err, "a session refused on the sample timing although the server it reached tells its own")
	t.Cleanup(c.Close)
	sv := c.sv.Load()
	require.Equal(t, SourceConf, sv.source)
	require.Equal(t, Timing{Tick: 100 * time.Millisecond, SyncLimit: 10}, sv.timing)
}
