package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"

	"github.com/zklock/zklock/zktest"
)

// connectFirst opens a session that starts on addrs[0] (the client tries
// its servers in a random order: its dialer refuses the others until the
// first connection) and may move to any of them afterwards.
func connectFirst(t *testing.T, addrs []string, timeout time.Duration) (*client.Client, *recorder) {
	t.Helper()
	var started atomic.Bool
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		if !started.Load() && addr != addrs[0] {
			return nil, fmt.Errorf("the first connection goes to %s", addrs[0])
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	conn, rec := dial(t, client.Config{Servers: addrs, Timeout: timeout, Dialer: dialer})
	started.Store(true)
	require.Equal(t, addrs[0], rec.lastServer(), "the session starts on the first server")
	return conn, rec
}

// serving reports whether server i serves clients, by 'srvr'.
func serving(ctx context.Context, c *zktest.Cluster, i int) (bool, string) {
	out, err := c.FourLetter(ctx, i, "srvr")
	if err != nil {
		return false, err.Error()
	}
	return strings.Contains(out, "Mode: "), out
}

// waitNotServing waits until server i says it does not serve clients.
func waitNotServing(t *testing.T, c *zktest.Cluster, i int) {
	t.Helper()
	eventually(t, fmt.Sprintf("server %d stops serving", i), func() error {
		if ok, out := serving(context.Background(), c, i); ok {
			return fmt.Errorf("still serving: %s", out)
		}
		return nil
	})
}

func addrsOf(c *zktest.Cluster, ids ...int) []string {
	var out []string
	for _, i := range ids {
		out = append(out, c.Server(i).Addr())
	}
	return out
}

func others(c *zktest.Cluster, skip ...int) []int {
	var out []int
	for i := range c.Len() {
		if !contains(skip, i) {
			out = append(out, i)
		}
	}
	return out
}

func contains(s []int, v int) bool {
	for _, x := range s {
		if x == v {
			return true
		}
	}
	return false
}

// TestPeerNetworkIsolatedLeader isolates the leader of a 3-server ensemble:
// the other two elect a new leader and serve writes, the old leader stops
// serving, a session that can reach only the old leader expires, and a
// session whose server list goes on to the majority moves there and lives.
// After the heal the old leader rejoins as a follower with the writes made
// without it.
func TestPeerNetworkIsolatedLeader(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3, zktest.WithPeerNetwork())
	ctx := context.Background()
	old, err := c.Leader(ctx)
	require.NoError(t, err)
	rest := others(c, old)

	pinned, pinnedRec := connect(t, addrsOf(c, old), 2*time.Second)
	_, _, err = pinned.Create(reqCtx(t), "/pinned", nil, client.ModeEphemeral, openACL)
	require.NoError(t, err)
	mover, moverRec := connectFirst(t, addrsOf(c, append([]int{old}, rest...)...), 4*time.Second)
	_, _, err = mover.Create(reqCtx(t), "/mover", nil, client.ModeEphemeral, openACL)
	require.NoError(t, err)
	majority, _ := connect(t, addrsOf(c, rest...), 4*time.Second)

	require.NoError(t, c.Isolate(old))
	assert.False(t, c.Reachable(old, rest[0]))
	assert.True(t, c.Reachable(rest[0], rest[1]))
	require.NoError(t, c.WaitReady(ctx), "a leader on the majority side")
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.Contains(t, rest, leader, "the new leader is on the majority side")
	waitNotServing(t, c, old)
	pinnedRec.waitCount(t, client.StateDisconnected, 1)

	eventually(t, "write on the majority side", func() error {
		_, _, err := majority.Create(reqCtx(t), "/during", []byte("x"), client.ModePersistent, openACL)
		if errors.Is(err, client.ErrNodeExists) {
			return nil
		}
		return err
	})
	eventually(t, "the pinned session expires", func() error {
		if _, ok, err := majority.Exists(reqCtx(t), "/pinned"); err != nil || ok {
			return fmt.Errorf("ephemeral still there (err %v)", err)
		}
		return nil
	})
	_, ok, err := majority.Exists(reqCtx(t), "/mover")
	require.NoError(t, err)
	assert.True(t, ok, "the session that moved to the majority lives")
	assert.GreaterOrEqual(t, countOf(moverRec, client.StateConnected), 2, "the mover reconnected")
	assert.Contains(t, addrsOf(c, rest...), moverRec.lastServer())

	require.NoError(t, c.HealNetwork())
	require.NoError(t, c.WaitReady(ctx))
	out, err := c.FourLetter(ctx, old, "srvr")
	require.NoError(t, err)
	assert.Contains(t, out, "Mode: follower", "the old leader rejoins as a follower")
	pinnedRec.waitCount(t, client.StateExpired, 1)
	direct, _ := connect(t, addrsOf(c, old), 4*time.Second)
	eventually(t, "the write made without it, read on the old leader", func() error {
		if err := direct.Sync(reqCtx(t), "/"); err != nil {
			return err
		}
		_, _, err := direct.Get(reqCtx(t), "/during")
		return err
	})
}

func countOf(r *recorder, s client.State) int {
	n, _ := r.count(s)
	return n
}

// TestPeerNetworkSplitFive splits a 5-server ensemble 2|3 with the leader
// on the small side: the three elect a leader and serve, the two stop
// serving, and after the heal all five serve the same data.
//
// Not parallel: five JVMs electing beside other tests' ensembles missed
// WaitReady's deadline in make test from a clean clone (server 1 not
// serving) while nothing was wrong but the load.
func TestPeerNetworkSplitFive(t *testing.T) {
	// Five JVMs and their elections under a loaded make test: its waits
	// for a serving side are preconditions, not the property tested.
	// Once (issue 47), after the heal, one server of the old leader's side
	// did not serve within those 3 minutes, and the 60 lines of log tail
	// did not say why: a failed run keeps the servers' whole directories
	// (logs, snapshots, transaction logs), named in its output.
	keep := filepath.Join(os.TempDir(), fmt.Sprintf("zktest-splitfive-%d-%d", os.Getpid(), time.Now().UnixNano()))
	c := zktest.StartEnsemble(t, 5, zktest.WithPeerNetwork(), zktest.WithStartTimeout(3*time.Minute),
		zktest.WithKeepOnFailure(keep))
	ctx := context.Background()
	old, err := c.Leader(ctx)
	require.NoError(t, err)
	rest := others(c, old)
	minority, majoritySide := []int{old, rest[0]}, rest[1:]

	require.NoError(t, c.Partition(minority, majoritySide))
	require.NoError(t, c.WaitReady(ctx))
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.Contains(t, majoritySide, leader)
	for _, i := range minority {
		waitNotServing(t, c, i)
	}
	conn, _ := connect(t, addrsOf(c, majoritySide...), 4*time.Second)
	eventually(t, "write on the majority side", func() error {
		_, _, err := conn.Create(reqCtx(t), "/split", nil, client.ModePersistent, openACL)
		if errors.Is(err, client.ErrNodeExists) {
			return nil
		}
		return err
	})

	require.NoError(t, c.HealNetwork())
	require.NoError(t, c.WaitReady(ctx))
	for _, i := range minority {
		direct, _ := connect(t, addrsOf(c, i), 4*time.Second)
		eventually(t, fmt.Sprintf("read on server %d after the heal", i), func() error {
			if err := direct.Sync(reqCtx(t), "/"); err != nil {
				return err
			}
			_, _, err := direct.Get(reqCtx(t), "/split")
			return err
		})
	}
}

// TestPeerNetworkCutOneWay stops the leader's bytes to one follower only:
// the follower hears no pings, drops out and cannot rejoin, while the
// leader and the other follower keep a quorum and serve. The heal lets it
// back.
func TestPeerNetworkCutOneWay(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3, zktest.WithPeerNetwork())
	ctx := context.Background()
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	f := others(c, leader)[0]

	require.NoError(t, c.CutOneWay(leader, f))
	assert.False(t, c.Reachable(f, leader), "one direction cut is no round trip")
	waitNotServing(t, c, f)
	require.NoError(t, c.WaitReady(ctx))
	now, err := c.Leader(ctx)
	require.NoError(t, err)
	assert.Equal(t, leader, now, "the leader keeps its quorum")
	conn, _ := connect(t, addrsOf(c, leader), 4*time.Second)
	_, _, err = conn.Create(reqCtx(t), "/one-way", nil, client.ModePersistent, openACL)
	require.NoError(t, err)

	require.NoError(t, c.HealNetwork())
	require.NoError(t, c.WaitReady(ctx))
	ok, out := serving(ctx, c, f)
	assert.True(t, ok, out)
}

// TestPeerNetworkLatency delays the link between the leader and a follower:
// a write through that follower crosses it three times (request forwarded,
// proposal, commit), so it cannot finish before 2*d has passed, and it
// still succeeds.
func TestPeerNetworkLatency(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3, zktest.WithPeerNetwork())
	ctx := context.Background()
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	f := others(c, leader)[0]
	conn, _ := connect(t, addrsOf(c, f), 4*time.Second)

	const d = 150 * time.Millisecond
	require.NoError(t, c.SetPeerLatency(leader, f, d))
	for i := range 3 {
		began := time.Now()
		_, _, err := conn.Create(reqCtx(t), fmt.Sprintf("/slow-%d", i), nil, client.ModePersistent, openACL)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(began), 2*d, "the write crossed the delayed link")
	}
	require.NoError(t, c.HealNetwork())
	_, _, err = conn.Create(reqCtx(t), "/after-heal", nil, client.ModePersistent, openACL)
	require.NoError(t, err)
}

func TestPeerNetworkRefusals(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithPeerNetwork())
	assert.ErrorIs(t, c.Isolate(0), zktest.ErrNoPeerNetwork, "a standalone server has no peers")
	assert.ErrorIs(t, c.Partition([]int{0}), zktest.ErrNoPeerNetwork)
	assert.ErrorIs(t, c.CutOneWay(0, 0), zktest.ErrNoPeerNetwork)
	assert.ErrorIs(t, c.SetPeerLatency(0, 0, time.Second), zktest.ErrNoPeerNetwork)
	assert.ErrorIs(t, c.HealNetwork(), zktest.ErrNoPeerNetwork)
	assert.False(t, c.Reachable(0, 0))
}
