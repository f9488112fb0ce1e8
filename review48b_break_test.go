//go:build review

package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// guardWrites and dataNode are review48_test.go's.

// Issue 48, second review (r48b): attacks that BROKE a claim. Behind the
// build tag "review" so that make test stays green; run with
// go test -tags review -run TestReview48bBreak_ .

// TestReview48bBreak_ZeroHandles shows (misuse, not bad input: handles
// are made by their constructors, which their docs name): the zero value
// of every exported handle type, and a nil one, panics on its first
// blocking call instead of returning an error of the misuse group.
func TestReview48bBreak_ZeroHandles(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"zero Mutex.Lock":        func() error { var m zklock.Mutex; return m.Lock(ctx) },
		"nil Mutex.Lock":         func() error { var m *zklock.Mutex; return m.Lock(ctx) },
		"zero Election.Campaign": func() error { var e zklock.Election; _, err := e.Campaign(ctx, nil); return err },
		"zero MultiLock.Lock":    func() error { var m zklock.MultiLock; return m.Lock(ctx) },
		"zero Lease.Release":     func() error { var l zklock.Lease; return l.Release(ctx) },
		"zero zk.Client.Get":     func() error { var c zk.Client; _, _, err := c.Get(ctx, "/"); return err },
		"zero zk.Watch.Remove":   func() error { var w zk.Watch; return w.Remove(ctx) },
	} {
		if err := callNoPanic(f); err == nil || err.Error()[:5] == "PANIC" {
			t.Errorf("%s: %v", name, err)
		}
	}
}

// TestReview48bBreak_SeqLayoutGuardReused shows a write committed under
// the guard of a hold that is gone while a rival on another Session holds
// (claim 2: "a write guarded by the guard of a hold that is gone ...
// never commits"). WithSequenceLayout names its nodes "seqlock-<seq>"
// with no unique part, and the guard is an existence check of that name
// (Version -1). The lock path is a CONTAINER: once the hold ends (Unlock,
// or Break, of which a plain Mutex is not told) the server reaps the empty
// container (within a second under zktest; 60 s by default), the next
// Lock re-creates it, its sequence counter starts again, and the rival's
// node gets the very name of the old one: the old guard passes again.
// The default layout's "_c_<uuid>-" prefix is new per node, so its guard
// fails (checked the same way: ErrNoNode).
func TestReview48bBreak_SeqLayoutGuardReused(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s1 := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s1)
	for _, end := range []string{"Unlock", "Break"} {
		p := lockPath(t, "seq-"+end)
		a, err := zklock.NewMutex(s1, p, zklock.WithSequenceLayout())
		if err != nil {
			t.Fatal(err)
		}
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		g := a.Guard()
		if end == "Unlock" {
			if err := a.Unlock(ctx); err != nil {
				t.Fatal(err)
			}
		} else if _, err := zklock.Break(ctx, s2, p, true); err != nil {
			t.Fatal(err)
		}
		eventually(t, 20*time.Second, "the empty container reaped", func() bool {
			_, ok, err := s1.Client().Exists(ctx, p)
			return err == nil && !ok
		})
		b, err := zklock.NewMutex(s2, p, zklock.WithSequenceLayout())
		if err != nil {
			t.Fatal(err)
		}
		if err := b.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := guardWrites(ctx, s1, data, "a's hold is gone, b holds", g); err == nil {
			t.Errorf("after a's %s, a's guard %+v committed a write while b (another Session) holds %s",
				end, *g, b.Guard().Path)
		}
		if end == "Break" {
			_ = a.Unlock(ctx) // a was not told: its Unlock is the caller's only end
		}
		if err := b.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}
