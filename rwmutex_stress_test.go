package zklock_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// rwChecker is the in-process invariant: readers > 0 implies writers == 0,
// and writers <= 1.
type rwChecker struct {
	mu                 sync.Mutex
	readers, writers   int
	maxReaders         int
	violations, writes int
}

func (c *rwChecker) enter(write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if write {
		c.writers++
		c.writes++
	} else {
		c.readers++
		c.maxReaders = max(c.maxReaders, c.readers)
	}
	if c.writers > 1 || (c.writers > 0 && c.readers > 0) {
		c.violations++
	}
}

func (c *rwChecker) leave(write bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if write {
		c.writers--
	} else {
		c.readers--
	}
}

func TestRWMutexMixedInvariant(t *testing.T) {
	t.Parallel()
	const sessions, cycles = 16, 50
	c := shared(t)
	ctx, cancel := context.WithTimeout(ctxFor(t), 3*time.Minute)
	defer cancel()
	path := lockPath(t, "rw")
	var chk rwChecker
	ss := manySessions(t, c.Servers(), sessions)
	err := runAll(ctx, sessions, func(ctx context.Context, i int) error {
		m, err := zklock.NewRWMutex(ss[i], path)
		if err != nil {
			return err
		}
		rng := rand.New(rand.NewPCG(uint64(i), 4))
		for j := range cycles {
			if err := rwCycle(ctx, m, &chk, rng.IntN(4) == 0); err != nil {
				return fmt.Errorf("session %d cycle %d: %w", i, j, err)
			}
		}
		return nil
	})
	require.NoError(t, err)
	t.Logf("%d cycles, %d writes, up to %d readers together", sessions*cycles, chk.writes, chk.maxReaders)
	require.Zero(t, chk.violations)
	require.Greater(t, chk.maxReaders, 1, "readers never shared")
	require.Positive(t, chk.writes)
}

func rwCycle(ctx context.Context, m *zklock.RWMutex, chk *rwChecker, write bool) error {
	lock, unlock := m.RLock, m.RUnlock
	if write {
		lock, unlock = m.Lock, m.Unlock
	}
	if err := lock(ctx); err != nil {
		return err
	}
	chk.enter(write)
	time.Sleep(time.Millisecond)
	chk.leave(write)
	return unlock(ctx)
}

// A writer cut off from the server past its session timeout sees Lost fire
// before a waiting reader is granted the lock.
func TestRWMutexCutOffWriter(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	cut := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	other := newSession(t, c.Servers())
	path := lockPath(t, "rw")
	w, r := newRW(t, cut, path), newRW(t, other, path)
	require.NoError(t, w.Lock(ctx))
	require.NoError(t, w.Downgrade(ctx), "downgrade")
	rd := async(func() error { return r.Lock(ctx) })
	pending(t, rd, 300*time.Millisecond, "writer while another holds")

	p.Blackhole()
	lost := w.Lost()
	var lostAt time.Time
	select {
	case <-lost:
		lostAt = time.Now()
	case <-time.After(10 * time.Second):
		t.Fatal("Lost did not fire")
	}
	res := await(t, rd, 20*time.Second, "writer after the cut")
	require.NoError(t, res.err)
	require.True(t, res.at.After(lostAt), "granted before the cut-off holder was told")
	require.ErrorIs(t, w.Unlock(ctx), zklock.ErrLockLost)
	require.ErrorIs(t, w.RUnlock(ctx), zklock.ErrLockLost)
	require.NoError(t, r.Unlock(ctx))
	p.Heal()
}
