package zklock_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

func newRW(t *testing.T, s *zklock.Session, path string) *zklock.RWMutex {
	t.Helper()
	m, err := zklock.NewRWMutex(s, path)
	require.NoError(t, err)
	return m
}

// waitQueued waits until the lock's queue has n nodes.
func waitQueued(t *testing.T, m *zklock.RWMutex, n int) {
	t.Helper()
	eventually(t, 10*time.Second, "queue length", func() bool {
		cs, err := zklock.ContendersOf(ctxFor(t), m)
		return err == nil && len(cs) == n
	})
}

func TestRWMutexReadersShare(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	ss := manySessions(t, c.Servers(), 4)
	var readers []*zklock.RWMutex
	for _, s := range ss[:3] {
		m := newRW(t, s, path)
		require.NoError(t, m.RLock(ctx), "readers must share")
		require.NotZero(t, m.Token())
		readers = append(readers, m)
	}
	w := newRW(t, ss[3], path)
	require.ErrorIs(t, w.TryLock(ctx), zklock.ErrLocked)
	cs, err := zklock.ContendersOf(ctx, w)
	require.NoError(t, err)
	require.Len(t, cs, 3, "a failed TryLock leaves nothing")
	for _, c := range cs {
		require.Equal(t, zklock.KindRWMutexRead, c.Kind)
		require.True(t, strings.HasPrefix(c.Path, path+"/_c_"), c.Path)
	}
	for _, m := range readers {
		require.NoError(t, m.RUnlock(ctx))
	}
	require.NoError(t, w.TryLock(ctx))
	require.NoError(t, w.Unlock(ctx))
}

func TestRWMutexWriterExcludes(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	ss := manySessions(t, c.Servers(), 3)
	w, r, w2 := newRW(t, ss[0], path), newRW(t, ss[1], path), newRW(t, ss[2], path)
	require.NoError(t, w.Lock(ctx))
	require.ErrorIs(t, r.TryRLock(ctx), zklock.ErrLocked)
	require.ErrorIs(t, w2.TryLock(ctx), zklock.ErrLocked)
	rd := async(func() error { return r.RLock(ctx) })
	waitQueued(t, w, 2)
	wr := async(func() error { return w2.Lock(ctx) })
	waitQueued(t, w, 3)
	pending(t, rd, 300*time.Millisecond, "reader behind a writer")
	pending(t, wr, 0, "writer behind a writer")
	require.NoError(t, w.Unlock(ctx))
	require.NoError(t, await(t, rd, 10*time.Second, "reader").err)
	pending(t, wr, 300*time.Millisecond, "writer behind a reader")
	require.NoError(t, r.RUnlock(ctx))
	require.NoError(t, await(t, wr, 10*time.Second, "writer").err)
	require.NoError(t, w2.Unlock(ctx))
}

// A reader that arrives after a waiting writer waits for it: readers cannot
// starve writers.
func TestRWMutexReaderWriterReaderOrder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	ss := manySessions(t, c.Servers(), 3)
	r1, w, r2 := newRW(t, ss[0], path), newRW(t, ss[1], path), newRW(t, ss[2], path)
	require.NoError(t, r1.RLock(ctx))
	wr := async(func() error { return w.Lock(ctx) })
	waitQueued(t, r1, 2)
	rd := async(func() error { return r2.RLock(ctx) })
	waitQueued(t, r1, 3)
	pending(t, rd, 500*time.Millisecond, "second reader behind a queued writer")
	require.ErrorIs(t, r2.TryRLock(ctx), zklock.ErrLocked, "a reader may not pass the queued writer")

	require.NoError(t, r1.RUnlock(ctx))
	wres := await(t, wr, 10*time.Second, "writer")
	require.NoError(t, wres.err)
	pending(t, rd, 300*time.Millisecond, "second reader while the writer holds")
	require.NoError(t, w.Unlock(ctx))
	rres := await(t, rd, 10*time.Second, "second reader")
	require.NoError(t, rres.err)
	require.True(t, rres.at.After(wres.at))
	require.NoError(t, r2.RUnlock(ctx))
}

// Downgrading with a writer queued: the writer never overlaps the
// downgraded reader.
func TestRWMutexDowngradeKeepsQueuedWriterOut(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	ss := manySessions(t, c.Servers(), 3)
	a, w, r := newRW(t, ss[0], path), newRW(t, ss[1], path), newRW(t, ss[2], path)
	require.NoError(t, a.Lock(ctx))
	writeNode := zklock.NodeOf(a)
	wr := async(func() error { return w.Lock(ctx) })
	waitQueued(t, a, 2)

	require.NoError(t, a.Downgrade(ctx), "downgrade is granted at once")
	require.NoError(t, a.Unlock(ctx))
	readNode := zklock.NodeOf(a)
	require.Contains(t, readNode, "__READ__")
	require.Equal(t, writeNode[len(writeNode)-10:], readNode[len(readNode)-10:],
		"the read node takes the writer's place")
	cs, err := zklock.ContendersOf(ctx, a)
	require.NoError(t, err)
	require.Equal(t, readNode, cs[0].Path, "the downgraded reader stays ahead of the queued writer")

	pending(t, wr, 700*time.Millisecond, "queued writer while the downgraded reader holds")
	// A later reader queues behind the writer; it must not jump the queue.
	rd := async(func() error { return r.RLock(ctx) })
	waitQueued(t, a, 3)
	pending(t, rd, 300*time.Millisecond, "reader behind the queued writer")

	require.NoError(t, a.RUnlock(ctx))
	require.NoError(t, await(t, wr, 10*time.Second, "writer").err)
	require.NoError(t, w.Unlock(ctx))
	require.NoError(t, await(t, rd, 10*time.Second, "reader").err)
	require.NoError(t, r.RUnlock(ctx))
}

// Upgrade, as with sync.RWMutex, waits: Lock while the handle holds a read
// lock (another goroutine's) queues behind it until RUnlock.
func TestRWMutexLockWaitsForReaders(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	m := newRW(t, s, lockPath(t, "rw"))
	require.NoError(t, m.RLock(ctx))
	var le *zklock.LockedError
	require.ErrorAs(t, m.TryLock(ctx), &le, "the handle's own reader blocks a writer")
	w := async(func() error { return m.Lock(ctx) })
	waitQueued(t, m, 2)
	pending(t, w, 300*time.Millisecond, "Lock while the handle's reader holds")
	require.NoError(t, m.RUnlock(ctx))
	require.NoError(t, await(t, w, 10*time.Second, "writer").err, "after RUnlock the write lock is granted")
	require.NoError(t, m.Unlock(ctx))
}

// An RWMutex shared by goroutines behaves like sync.RWMutex: Lock while
// the handle holds the write lock waits for Unlock (any goroutine's), RLock
// takes a read lock of its own beside the handle's others, and each
// release ends one acquisition.
func TestRWMutexSharedHandle(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, "rw")
	m := newRW(t, s, path)
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrNotLocked)
	require.ErrorIs(t, m.RUnlock(ctx), zklock.ErrNotLocked)
	require.NoError(t, m.Lock(ctx))
	token := m.Token()
	second := async(func() error { return m.Lock(ctx) })
	waitQueued(t, m, 2)
	pending(t, second, 300*time.Millisecond, "a second Lock on the write-locked handle")
	require.ErrorIs(t, m.TryLock(ctx), zklock.ErrLocked)
	require.NoError(t, m.Unlock(ctx), "any goroutine may Unlock")
	require.NoError(t, await(t, second, 10*time.Second, "the second Lock").err)
	require.Greater(t, m.Token(), token, "each acquisition has its own token")
	require.NoError(t, m.Unlock(ctx))
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrNotLocked)
	require.Zero(t, m.Token())
	select {
	case <-m.Lost():
	default:
		t.Fatal("Lost must be closed when nothing is held")
	}

	require.NoError(t, m.RLock(ctx))
	require.NoError(t, m.RLock(ctx), "readers share the lock")
	require.Len(t, nodeNames(t, s, path), 2, "each read lock is an acquisition of its own")
	require.NoError(t, m.RUnlock(ctx))
	require.NoError(t, m.RUnlock(ctx))
	require.ErrorIs(t, m.RUnlock(ctx), zklock.ErrNotLocked)
	require.Empty(t, nodeNames(t, s, path))

	l := locker{m.RLock, m.RUnlock}
	l.Lock()
	require.Len(t, nodeNames(t, s, path), 1, "RLocker takes the read lock")
	l.Unlock()
	require.Panics(t, l.Unlock, "RLocker panics on error")
}

func TestRWMutexBadInput(t *testing.T) {
	c := shared(t)
	s := newSession(t, c.Servers())
	_, err := zklock.NewRWMutex(nil, "/x")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	for _, p := range []string{"", "x", "/x/", "/zookeeper/x", "/a//b"} {
		_, err := zklock.NewRWMutex(s, p)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, p)
	}
	m := newRW(t, s, lockPath(t, "rw"))
	done, cancel := context.WithCancel(context.Background())
	cancel()
	//lint:ignore SA1012 a nil ctx is what is tested
	require.ErrorIs(t, m.Lock(nil), zklock.ErrInvalidArgument)
	//lint:ignore SA1012 a nil ctx is what is tested
	require.ErrorIs(t, m.RLock(nil), zklock.ErrInvalidArgument)
	require.ErrorIs(t, m.RLock(done), context.Canceled)
	require.ErrorIs(t, m.Lock(done), context.Canceled)
	require.Empty(t, nodeNames(t, s, lockPath(t, "rw")))
}
