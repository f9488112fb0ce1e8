package zklock_test

import (
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// TestSessionOnServerBehind: a session whose only reachable server is
// behind its last zxid cannot be resumed there (the server refuses it on
// every attempt). The hold's Lost fires by its deadline; then, once no
// server has resumed the session for twice its timeout, the session is reported
// expired and replaced by a new one on that server, where a lock is taken
// again. It runs alone: beside the other tests, at load 40-50, it saw its
// 2s session reconnected where it waited for expiry (a reconnect the
// load caused, most likely to the server ahead before the move).
func TestSessionOnServerBehind(t *testing.T) {
	ahead, behind := standalone(t), standalone(t)
	p := zktest.NewProxy(t, append(ahead.Servers(), behind.Servers()...))
	p.Only(0)
	ctx := ctxFor(t)
	// Two standalone servers behind one list, the second refusing every
	// connection until the move: its 'conf' cannot answer NewSession, so
	// the timing is stated (a standalone server's is not needed).
	s := newSession(t, p.Addrs(), zklock.WithEnsembleTiming(ahead.TickTime(), 5))
	events, err := s.Subscribe(ctx)
	require.NoError(t, err)
	m, err := zklock.NewMutex(s, lockPath(t, "lock"))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	for i := range 10 { // the zxid the session has seen is well ahead of the fresh server's
		_, err := s.Client().Create(ctx, fmt.Sprintf("%s-%d", lockPath(t, "n"), i), nil, zk.ModeEphemeral)
		require.NoError(t, err)
	}
	old := s.SessionID()

	moved := time.Now()
	p.Only(1)
	select {
	case <-m.Lost():
	case <-time.After(20 * time.Second):
		t.Fatal("the hold was not lost")
	}
	lost := time.Since(moved)
	expect(t, events, 20*time.Second, zk.StateExpired, zk.StateReconnected)
	expired := time.Since(moved)
	t.Logf("moved to a server behind: the hold lost after %v, the session expired after %v", lost, expired)
	require.Less(t, lost, expired, "the hold's loss comes before the session is given up")
	ev := expect(t, events, 20*time.Second, zk.StateConnected)
	require.NotEqual(t, old, ev.SessionID, "a new session")
	again, err := zklock.NewMutex(s, lockPath(t, "lock"))
	require.NoError(t, err)
	require.NoError(t, again.Lock(ctx), "a lock in the new session, on the server behind")
}
