package zklock_test

import (
	"context"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// TestReconnectStormWaitersInOrder forces 30 reconnects on the sessions of
// three Mutex waiters queued behind a holder: a zktest proxy resets their
// connections, each time once every waiter's session has reconnected,
// while each waiter's session writes without pause (replies carrying new
// zxids are read while each reconnect restores the waiters' watches: where
// go-zookeeper v1.0.4 raced on lastZxid, which -race reports). Every
// session keeps its ZooKeeper session throughout, no waiter acquires while
// the holder holds, and once the holder unlocks the waiters acquire in the
// order they queued, each once.
func TestReconnectStormWaitersInOrder(t *testing.T) {
	t.Parallel()
	const (
		waiters = 3
		resets  = 30
	)
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 20*time.Second))
	// Each reset comes as soon as the waiters reconnected, before their
	// connections proved useful, so the client backs off up to a second
	// between them (issue 45: a connection that failed within its first
	// second does not reset the backoff): 30 resets take about 30s.
	ctx, cancel := context.WithTimeout(context.Background(), 2*testTimeout)
	defer cancel()
	path := lockPath(t, "lock")
	hs := newSession(t, c.Servers(), zklock.WithSessionTimeout(10*time.Second))
	holder, err := zklock.NewMutex(hs, path)
	require.NoError(t, err)
	require.NoError(t, holder.Lock(ctx))

	px := zktest.NewProxy(t, c.Servers())
	type waiter struct {
		s      *zklock.Session
		events <-chan zk.Event
		sid    int64
	}
	ws := make([]waiter, waiters)
	order := make(chan int, waiters)
	done := make(chan error, waiters)
	for i := range ws {
		s := newSession(t, px.Addrs(), zklock.WithSessionTimeout(10*time.Second))
		events, err := s.Subscribe(ctx)
		require.NoError(t, err)
		ws[i] = waiter{s: s, events: events, sid: s.SessionID()}
		m, err := zklock.NewMutex(s, path)
		require.NoError(t, err)
		go func() {
			err := m.Lock(ctx)
			if err == nil {
				order <- i
				err = m.Unlock(ctx)
			}
			done <- err
		}()
		// Queued in index order: the next waiter starts once this one's
		// node is on the server.
		awaitEphemeralOf(t, hs.Client(), path, s.SessionID())
	}
	// Traffic on every waiter's session, across the resets: a write's
	// outcome is unknown when its connection is reset (zk.ErrConnectionLoss).
	stop := make(chan struct{})
	var writes sync.WaitGroup
	var written atomic.Int64
	for i, w := range ws {
		counter := lockPath(t, "counter-"+strconv.Itoa(i))
		_, err = w.s.Client().Create(ctx, counter, []byte("0"), zk.ModeEphemeral)
		require.NoError(t, err)
		writes.Add(1)
		go func() {
			defer writes.Done()
			for n := 0; n < 1_000_000; n++ {
				select {
				case <-stop:
					return
				default:
				}
				if _, err := w.s.Client().Set(ctx, counter, []byte(strconv.Itoa(n)), -1); err == nil {
					written.Add(1)
				}
			}
		}()
	}

	began := time.Now()
	for round := 1; round <= resets; round++ {
		px.Reset()
		for i, w := range ws {
			expect(t, w.events, 20*time.Second, zk.StateReconnected, zk.StateExpired, zk.StateClosed)
			require.Equal(t, w.sid, w.s.SessionID(), "waiter %d's session changed in round %d", i, round)
		}
		select {
		case i := <-order:
			t.Fatalf("round %d: waiter %d acquired while the holder holds", round, i)
		default:
		}
	}
	close(stop)
	writes.Wait()
	conns, _, _ := px.Stats()
	t.Logf("%d resets in %v; %d connections through the proxy; %d writes by the waiters' sessions",
		resets, time.Since(began).Round(time.Millisecond), conns, written.Load())
	require.GreaterOrEqual(t, conns, waiters*(resets+1), "every waiter reconnected after every reset")

	require.NoError(t, holder.Unlock(ctx))
	var got []int
	for range waiters {
		select {
		case i := <-order:
			got = append(got, i)
		case <-ctx.Done():
			t.Fatalf("waiters acquired %v, then none: %v", got, ctx.Err())
		}
	}
	for range waiters {
		require.NoError(t, <-done)
	}
	require.Equal(t, []int{0, 1, 2}, got, "the waiters acquired out of their queue order")
}
