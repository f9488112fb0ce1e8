package zklock_test

import (
	"errors"
	"path"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// A TryRLock refused because a writer waits (readers A and B hold, writer
// C is queued) names C, the node that blocks it, not reader A, which does
// not; it says C waits rather than holds. A TryLock there names A, a
// holder (issue 47).
func TestTryRLockNamesQueuedWriter(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	p := lockPath(t, "rw")
	ss := manySessions(t, c.Servers(), 5)
	a, b, w := newRW(t, ss[0], p), newRW(t, ss[1], p), newRW(t, ss[2], p)
	require.NoError(t, a.RLock(ctx))
	require.NoError(t, b.RLock(ctx))
	done := make(chan error, 1)
	go func() { done <- w.Lock(ctx) }()
	waitQueued(t, a, 3)
	cs, err := zklock.ContendersOf(ctx, a)
	require.NoError(t, err)
	first, writer := path.Base(cs[0].Path), path.Base(cs[2].Path)
	require.Equal(t, zklock.KindRWMutexWrite, cs[2].Kind)

	var le *zklock.LockedError
	err = newRW(t, ss[3], p).TryRLock(ctx)
	require.True(t, errors.As(err, &le), "TryRLock: %v", err)
	if le.Holder != writer || le.Session != cs[2].Session || strings.Contains(err.Error(), "held by") {
		t.Errorf("TryRLock behind a queued writer: Holder %s session 0x%x, %q; want the writer %s (session 0x%x), not said to hold",
			le.Holder, le.Session, err, writer, cs[2].Session)
	}
	err = newRW(t, ss[4], p).TryLock(ctx)
	require.True(t, errors.As(err, &le), "TryLock: %v", err)
	if le.Holder != first || le.Session != cs[0].Session || !strings.Contains(err.Error(), "held by") {
		t.Errorf("TryLock behind readers: Holder %s session 0x%x, %q; want the first reader %s (session 0x%x)",
			le.Holder, le.Session, err, first, cs[0].Session)
	}
	require.NoError(t, a.RUnlock(ctx))
	require.NoError(t, b.RUnlock(ctx))
	require.NoError(t, <-done)
	require.NoError(t, w.Unlock(ctx))
}
