package zklock_test

// Adversarial tests of issue 34's seams (features that meet), by the
// review of branch swap. Each test named TestBreak… encodes an attack.

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// TestBreakDowngradedReadAfterWriteUnlockBound: a bounded writer
// downgrades, then releases its write lock, keeping the read lock alone
// (the read node took the write node's place). docs/recipes.md: "a writer
// that downgraded keeps its read lock only until the write lock's bound".
// Whatever ends the read lock, a writer queued behind must not hold
// before the read hold's loss signal fires.
func TestBreakDowngradedReadAfterWriteUnlockBound(t *testing.T) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	as := newSession(t, c.Servers())
	a, err := zklock.NewRWMutex(as, path, zklock.WithMaxHold(1500*time.Millisecond))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	grantedAt := time.Now()
	require.NoError(t, a.Downgrade(ctx))
	require.NoError(t, a.Unlock(ctx))
	readLost := a.Lost()
	require.False(t, closed(readLost), "the read lock's Lost fired at the write Unlock")

	b := newRW(t, newSession(t, c.Servers()), path)
	got := make(chan time.Time, 1)
	go func() {
		if b.Lock(ctx) == nil {
			got <- time.Now()
		}
	}()
	window := time.NewTimer(5 * time.Second)
	defer window.Stop()
	select {
	case <-readLost:
		t.Logf("the read lock's Lost fired %v after the write grant", time.Since(grantedAt))
		select {
		case at := <-got:
			t.Logf("writer B held %v after the write grant", at.Sub(grantedAt))
		case <-window.C:
			t.Fatalf("writer B did not hold within 5s of the write grant: A's read node stays after its Lost")
		}
	case at := <-got:
		t.Fatalf("writer B held %v after A's write grant while A's read lock's Lost was open", at.Sub(grantedAt))
	case <-window.C:
		t.Fatalf("the read lock outlived the write lock's bound by more than 3.5s")
	}
	_ = a.RUnlock(ctx)
}

// TestBreakRevokeDowngradedReader: a revocable writer downgrades and
// releases its write lock; a writer queues behind its read lock; Revoke
// aimed at the path must be heard by the read hold (docs/recipes.md: "a
// read lock taken by downgrading a revocable write lock is revocable
// too"), and the writer behind must not hold before the reader lets go.
func TestBreakRevokeDowngradedReader(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	as := newSession(t, c.Servers())
	a, err := zklock.NewRWMutex(as, path, zklock.WithRevocable(func() {}))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	require.NoError(t, a.Downgrade(ctx))
	require.NoError(t, a.Unlock(ctx))
	b := newRW(t, newSession(t, c.Servers()), path)
	got := make(chan error, 1)
	go func() { got <- b.Lock(ctx) }()
	waitQueued(t, b, 2)
	revoked, err := zklock.Revoke(ctx, newSession(t, c.Servers()), path)
	require.NoError(t, err)
	t.Logf("Revoke wrote %v", revoked)
	select {
	case <-zklock.RevokedOf(a):
	case err := <-got:
		t.Fatalf("writer B returned (%v) while A held its read lock", err)
	case <-time.After(5 * time.Second):
		t.Fatal("the downgraded read hold did not hear the revocation within 5s")
	}
	select {
	case err := <-got:
		t.Fatalf("writer B returned (%v) before A released its read lock", err)
	case <-time.After(300 * time.Millisecond):
	}
	require.NoError(t, a.RUnlock(ctx))
	require.NoError(t, <-got)
	require.NoError(t, b.Unlock(ctx))
}
