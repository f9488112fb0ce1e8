//go:build review

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
	for _, op := range []string{"RLock", "Downgrade"} {
		t.Run(op, func(t *testing.T) {
			srv := shared(t)
			ctx := ctxFor(t)
			path := lockPath(t, "rw")
			s := newSession(t, srv.Servers())
			obs := newSession(t, srv.Servers())
			rs := newSession(t, srv.Servers())
			m, err := zklock.NewRWMutex(s, path)
			if err != nil {
				t.Fatal(err)
			}
			rival, err := zklock.NewRWMutex(rs, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			if _, err := zklock.Break(ctx, obs, path, true); err != nil {
				t.Fatalf("Break: %v", err)
			}
			if err := rival.Lock(ctx); err != nil {
				t.Fatalf("rival: %v", err)
			}
			octx, cancel := context.WithTimeout(ctx, 2*time.Second)
			defer cancel()
			if op == "RLock" {
				err = m.RLock(octx)
			} else {
				err = m.Downgrade(octx)
			}
			if err == nil {
				t.Errorf("%s returned nil while the rival writer %s holds (our read node %s)", op, nodeOf(rival.Guard()), nodeOf(m.Guard()))
				_ = m.RUnlock(ctx)
			} else {
				t.Logf("%s: %v", op, err)
			}
			_ = m.Unlock(ctx)
			if err := rival.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
			eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 0 })
		})
	}
}
