package zklock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// With 50 clients waiting for a lease, one release causes O(1) server
// requests: only the head of the queue watches the lease set, and only the
// next one in line moves up.
func TestSemaphoreHerd(t *testing.T) {
	const waiters = 50
	c, ss := herdServer(t, waiters+1)
	ctx := ctxFor(t)
	path := lockPath(t, "sem")
	holder, err := newSem(t, ss[0], path, 1).Acquire(ctx, 1)
	require.NoError(t, err)
	granted := make(chan *zklock.Lease, waiters)
	for _, s := range ss[1:] {
		sem := newSem(t, s, path, 1)
		go func() {
			if l, err := sem.Acquire(ctx, 1); err == nil {
				granted <- l
			}
		}()
	}
	probe := newSem(t, ss[0], path, 1)
	eventually(t, 20*time.Second, "all waiters queued", func() bool {
		cs, err := probe.Contenders(ctx)
		return err == nil && len(cs) == waiters
	})
	time.Sleep(300 * time.Millisecond) // let the head settle on its watch
	var next *zklock.Lease
	caused, idle := requestsDuring(t, c, func() {
		require.NoError(t, holder.Release(ctx))
		next = receive(t, granted, 10*time.Second)
		eventually(t, 5*time.Second, "the next head waits", func() bool {
			return len(nodeNames(t, ss[0], path+"/leases")) == 2
		})
	})
	// The probe's own requests (one list per poll) are counted too.
	t.Logf("one release with %d waiters: %d requests (idle baseline %d)", waiters, caused, idle)
	require.Less(t, caused, int64(waiters/3), "a release woke more than the head of the queue")
	for range waiters - 1 {
		require.NoError(t, next.Release(ctx))
		next = receive(t, granted, 10*time.Second)
	}
	require.NoError(t, next.Release(ctx))
}

// A holder cut off from the server past its session timeout sees Lost fire,
// and its lease is then freed for others, never before.
func TestSemaphoreCutOffHolderFreesSlot(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	cut := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	other := newSession(t, c.Servers())
	path := lockPath(t, "sem")
	l, err := newSem(t, cut, path, 1).Acquire(ctx, 1)
	require.NoError(t, err)
	res, lb := acquireAsync(ctx, newSem(t, other, path, 1), 1)
	pending(t, res, 300*time.Millisecond, "second holder of a limit-1 semaphore")

	p.Blackhole()
	var lostAt time.Time
	select {
	case <-l.Lost():
		lostAt = time.Now()
	case <-time.After(10 * time.Second):
		t.Fatal("Lost did not fire")
	}
	r := await(t, res, 20*time.Second, "the freed lease")
	require.NoError(t, r.err)
	require.True(t, r.at.After(lostAt), "the slot was granted before the holder was told")
	t.Logf("granted to another %v after Lost fired", r.at.Sub(lostAt))
	err = l.Release(ctx)
	require.True(t, errors.Is(err, zklock.ErrLeaseLost), "Release after loss: %v", err)
	require.NoError(t, (*lb).Release(ctx))
	p.Heal() // lets the cut session learn of its expiry and close quickly
}

// A client waiting at the head of the queue whose session expires starts
// over under the new session and still gets its lease; nothing of the old
// session is counted.
func TestSemaphoreWaiterSurvivesExpiry(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	cut := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	other := newSession(t, c.Servers())
	path := lockPath(t, "sem")
	held, err := newSem(t, other, path, 1).Acquire(ctx, 1)
	require.NoError(t, err)
	res, lb := acquireAsync(ctx, newSem(t, cut, path, 1), 1)
	eventually(t, 10*time.Second, "waiter at the head", func() bool {
		return len(nodeNames(t, other, path+"/leases")) == 2
	})
	oldSID := cut.SessionID()
	require.NoError(t, zktest.ExpireSession(ctx, c, p, oldSID))
	eventually(t, 20*time.Second, "new session", func() bool { return cut.SessionID() != oldSID })
	eventually(t, 10*time.Second, "waiter back at the head", func() bool {
		return len(nodeNames(t, other, path+"/leases")) == 2
	})
	pending(t, res, 300*time.Millisecond, "waiter while the lease is held")
	require.NoError(t, held.Release(ctx))
	require.NoError(t, await(t, res, 10*time.Second, "waiter").err)
	hs, err := newSem(t, other, path, 1).Holders(ctx)
	require.NoError(t, err)
	require.Len(t, hs, 1)
	require.Equal(t, cut.SessionID(), hs[0].Session)
	require.NoError(t, (*lb).Release(ctx))
}
