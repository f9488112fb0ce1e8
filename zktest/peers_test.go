package zktest_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest"
)

// orderedHosts is a go-zookeeper HostProvider that tries servers in the
// given order, so a test knows which server a session starts on.
type orderedHosts struct {
	servers []string
	next    int
}

// Init ignores servers, which go-zookeeper has shuffled.
func (h *orderedHosts) Init([]string) error { return nil }
func (h *orderedHosts) Len() int            { return len(h.servers) }
func (h *orderedHosts) Connected()          {}
func (h *orderedHosts) Next() (string, bool) {
	s := h.servers[h.next%len(h.servers)]
	h.next++
	return s, h.next%len(h.servers) == 0
}

// connectFirst opens a session that starts on addrs[0] and moves on in order.
func connectFirst(t *testing.T, addrs []string, timeout time.Duration) (*zk.Conn, *recorder) {
	t.Helper()
	rec := newRecorder()
	conn, _, err := zk.Connect(addrs, timeout, zk.WithEventCallback(rec.callback),
		zk.WithLogger(quietLogger{}), zk.WithHostProvider(&orderedHosts{servers: addrs}))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	rec.waitCount(t, zk.StateHasSession, 1)
	require.Equal(t, addrs[0], conn.Server(), "the session starts on the first server")
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
	c := zktest.StartEnsemble(t, 3, zktest.WithPeerNetwork())
	ctx := context.Background()
	old, err := c.Leader(ctx)
	require.NoError(t, err)
	rest := others(c, old)

	pinned, pinnedRec := connect(t, addrsOf(c, old), 2*time.Second)
	_, err = pinned.Create("/pinned", nil, zk.FlagEphemeral, openACL)
	require.NoError(t, err)
	mover, moverRec := connectFirst(t, addrsOf(c, append([]int{old}, rest...)...), 4*time.Second)
	_, err = mover.Create("/mover", nil, zk.FlagEphemeral, openACL)
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
	pinnedRec.waitCount(t, zk.StateDisconnected, 1)

	eventually(t, "write on the majority side", func() error {
		_, err := majority.Create("/during", []byte("x"), 0, openACL)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})
	eventually(t, "the pinned session expires", func() error {
		if ok, _, err := majority.Exists("/pinned"); err != nil || ok {
			return fmt.Errorf("ephemeral still there (err %v)", err)
		}
		return nil
	})
	ok, _, err := majority.Exists("/mover")
	require.NoError(t, err)
	assert.True(t, ok, "the session that moved to the majority lives")
	assert.GreaterOrEqual(t, countOf(moverRec, zk.StateHasSession), 2, "the mover reconnected")
	assert.Contains(t, addrsOf(c, rest...), mover.Server())

	require.NoError(t, c.HealNetwork())
	require.NoError(t, c.WaitReady(ctx))
	out, err := c.FourLetter(ctx, old, "srvr")
	require.NoError(t, err)
	assert.Contains(t, out, "Mode: follower", "the old leader rejoins as a follower")
	pinnedRec.waitCount(t, zk.StateExpired, 1)
	direct, _ := connect(t, addrsOf(c, old), 4*time.Second)
	eventually(t, "the write made without it, read on the old leader", func() error {
		if _, err := direct.Sync("/"); err != nil {
			return err
		}
		_, _, err := direct.Get("/during")
		return err
	})
}

func countOf(r *recorder, s zk.State) int {
	n, _ := r.count(s)
	return n
}

// TestPeerNetworkSplitFive splits a 5-server ensemble 2|3 with the leader
// on the small side: the three elect a leader and serve, the two stop
// serving, and after the heal all five serve the same data.
func TestPeerNetworkSplitFive(t *testing.T) {
	c := zktest.StartEnsemble(t, 5, zktest.WithPeerNetwork())
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
		_, err := conn.Create("/split", nil, 0, openACL)
		if errors.Is(err, zk.ErrNodeExists) {
			return nil
		}
		return err
	})

	require.NoError(t, c.HealNetwork())
	require.NoError(t, c.WaitReady(ctx))
	for _, i := range minority {
		direct, _ := connect(t, addrsOf(c, i), 4*time.Second)
		eventually(t, fmt.Sprintf("read on server %d after the heal", i), func() error {
			if _, err := direct.Sync("/"); err != nil {
				return err
			}
			_, _, err := direct.Get("/split")
			return err
		})
	}
}

// TestPeerNetworkCutOneWay stops the leader's bytes to one follower only:
// the follower hears no pings, drops out and cannot rejoin, while the
// leader and the other follower keep a quorum and serve. The heal lets it
// back.
func TestPeerNetworkCutOneWay(t *testing.T) {
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
	_, err = conn.Create("/one-way", nil, 0, openACL)
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
		_, err := conn.Create(fmt.Sprintf("/slow-%d", i), nil, 0, openACL)
		require.NoError(t, err)
		assert.GreaterOrEqual(t, time.Since(began), 2*d, "the write crossed the delayed link")
	}
	require.NoError(t, c.HealNetwork())
	_, err = conn.Create("/after-heal", nil, 0, openACL)
	require.NoError(t, err)
}

func TestPeerNetworkRefusals(t *testing.T) {
	c := zktest.Start(t, zktest.WithPeerNetwork())
	assert.ErrorIs(t, c.Isolate(0), zktest.ErrNoPeerNetwork, "a standalone server has no peers")
	assert.ErrorIs(t, c.Partition([]int{0}), zktest.ErrNoPeerNetwork)
	assert.ErrorIs(t, c.CutOneWay(0, 0), zktest.ErrNoPeerNetwork)
	assert.ErrorIs(t, c.SetPeerLatency(0, 0, time.Second), zktest.ErrNoPeerNetwork)
	assert.ErrorIs(t, c.HealNetwork(), zktest.ErrNoPeerNetwork)
	assert.False(t, c.Reachable(0, 0))
}
