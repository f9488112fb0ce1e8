package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// An RWMutex handle holds the write lock; an operator Breaks it from
// another session and a rival writer of a third session holds. The handle's
// RLock and Downgrade are blocking calls: neither may return nil while the
// rival writer holds.
func TestReviewRWMutexReadAfterBreak(t *testing.T) {
	t.Parallel()
	for _, op := range []struct {
		name string
		call func(*zklock.RWMutex, context.Context) error
	}{{"RLock", (*zklock.RWMutex).RLock}, {"Downgrade", (*zklock.RWMutex).Downgrade}} {
		t.Run(op.name, func(t *testing.T) {
			ctx, m, rival := rwBrokenByRival(t)
			octx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if err := op.call(m, octx); err == nil {
				t.Errorf("%s returned nil while the rival writer %s holds (our read node %s)", op.name, nodeOf(rival.Guard()), nodeOf(m.Guard()))
				_ = m.RUnlock(ctx)
			} else {
				t.Logf("%s: %v", op.name, err)
			}
			_ = m.Unlock(ctx)
			if err := rival.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 0 })
		})
	}
}

// rwBrokenByRival is the set-up of TestReviewRWMutexReadAfterBreak, on the
// shared server: m held the write lock, Break deleted it, and rival, of
// another session, holds the write lock now.
func rwBrokenByRival(t *testing.T) (context.Context, *zklock.RWMutex, *zklock.RWMutex) {
	t.Helper()
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	m, err := zklock.NewRWMutex(newSession(t, srv.Servers()), path)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewRWMutex(newSession(t, srv.Servers()), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := zklock.Break(ctx, newSession(t, srv.Servers()), path, true); err != nil {
		t.Fatalf("Break: %v", err)
	}
	if err := rival.Lock(ctx); err != nil {
		t.Fatalf("rival: %v", err)
	}
	return ctx, m, rival
}
