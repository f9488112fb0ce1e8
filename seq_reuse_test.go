package zklock_test

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// TestSeqLayoutStaleUnlockAfterBreak: a sequence-layout hold that a Break
// ended (its Mutex is not told) must not delete, by its Unlock, the node
// of a rival that re-created the reaped lock path and got the very name
// "seqlock-0000000000" again; else a third contender holds beside the
// rival.
func TestSeqLayoutStaleUnlockAfterBreak(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s1, s2, s3 := newSession(t, srv.Servers()), newSession(t, srv.Servers()), newSession(t, srv.Servers())
	p := lockPath(t, "seq")
	a, b := brokenThenReused(ctx, t, s1, s2, p)
	before, _, err := s2.Client().Children(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	aErr := a.Unlock(ctx) // a's hold is gone: b's node must stay
	after, _, err := s2.Client().Children(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if len(after) != 1 || len(before) != 1 || after[0] != before[0] {
		t.Errorf("a's Unlock after the Break (returned %v) changed the queue b holds in: %v, then %v", aErr, before, after)
	}
	if !errors.Is(aErr, zklock.ErrLockLost) {
		t.Errorf("a's Unlock after the Break: %v, want ErrLockLost (its node is gone)", aErr)
	}
	c, err := zklock.NewMutex(s3, p, zklock.WithSequenceLayout())
	if err != nil {
		t.Fatal(err)
	}
	if err := c.TryLock(ctx); !errors.Is(err, zklock.ErrLocked) {
		t.Errorf("c's TryLock while b holds: %v, want ErrLocked", err)
		if err == nil {
			_ = c.Unlock(ctx)
		}
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("b's Unlock: %v", err)
	}
}

// TestReview48b_SeqLayoutGuardReused (a break of review 48b, untagged
// once fixed): a guard of a sequence-layout hold cannot tell the holder's
// node from a rival's of the same name (the lock path reaped and
// re-created after the hold ended: Unlock, or a Break the holder is not
// told of), so there is none: Guard is nil while held, and Multi refuses
// it, before and after a rival on another Session holds. Before the fix,
// the guard of a's hold that was gone committed a write while b held.
func TestReview48b_SeqLayoutGuardReused(t *testing.T) {
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
		if g != nil {
			t.Fatalf("a sequence-layout Mutex's Guard while held: %+v, want nil", *g)
		}
		if err := guardWrites(ctx, s1, data, "a holds", g); !errors.Is(err, zklock.ErrInvalidArgument) {
			t.Errorf("a write guarded by a's Guard while a holds: %v, want ErrInvalidArgument", err)
		}
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
		if err := guardWrites(ctx, s1, data, "a's hold is gone, b holds", g); !errors.Is(err, zklock.ErrInvalidArgument) {
			t.Errorf("after a's %s, a write guarded by a's Guard while b holds: %v, want ErrInvalidArgument", end, err)
		}
		if got := readData(ctx, t, s1, data); got != "" {
			t.Errorf("after a's %s: the data node holds %q, written under a guard", end, got)
		}
		if end == "Break" {
			if err := a.Unlock(ctx); !errors.Is(err, zklock.ErrLockLost) {
				t.Errorf("a's Unlock after the Break: %v, want ErrLockLost", err)
			}
		}
		if err := b.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSeqLayoutEpochEndAfterBreak: a sequence-layout hold that a Break
// ended and that was never unlocked must not, when its session's
// ownership epoch ends and the session survives, have the session delete
// by name the node of a rival that re-created the reaped path with the
// same name. The margin is wide (the epoch ends ~0.5 s after the last
// reply, the session may expire 2 s after it) so that the cut ends the
// epoch and not the session.
func TestSeqLayoutEpochEndAfterBreak(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	px := zktest.NewProxy(t, srv.Servers())
	s1 := newSession(t, px.Addrs(), zklock.WithSessionTimeout(2*time.Second), zklock.WithSafetyMargin(1500*time.Millisecond))
	s2 := newSession(t, srv.Servers())
	p := lockPath(t, "seq")
	a, b := brokenThenReused(ctx, t, s1, s2, p)
	sid := s1.Client().SessionID()
	px.Blackhole()
	select {
	case <-a.Lost():
	case <-time.After(5 * time.Second):
		t.Fatal("a's epoch did not end within 5s of the cut")
	}
	px.Heal()
	eventually(t, 10*time.Second, "s1 reconnected", func() bool {
		_, _, err := s1.Client().Exists(ctx, "/")
		return err == nil
	})
	if got := s1.Client().SessionID(); got != sid {
		t.Skipf("s1's session expired (0x%x, now 0x%x): the load ended it, not the epoch alone", sid, got)
	}
	// The session's cleanup of the ended epoch runs now; give it the time
	// a delete takes, then look: b's node must stand.
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		names, _, err := s2.Client().Children(ctx, p)
		if err != nil || len(names) != 1 {
			t.Fatalf("b holds; the queue after a's epoch ended: %v (err %v)", names, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("b's Unlock: %v", err)
	}
}

// brokenThenReused makes a sequence-layout Mutex of s1 hold p, Breaks it
// from s2, waits until the server reaped the empty container, and makes a
// rival Mutex of s2 hold p again: its node has the broken one's name.
func brokenThenReused(ctx context.Context, t *testing.T, s1, s2 *zklock.Session, p string) (a, b *zklock.Mutex) {
	t.Helper()
	a, err := zklock.NewMutex(s1, p, zklock.WithSequenceLayout())
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := zklock.Break(ctx, s2, p, true); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the empty container reaped", func() bool {
		_, ok, err := s2.Client().Exists(ctx, p)
		return err == nil && !ok
	})
	b, err = zklock.NewMutex(s2, p, zklock.WithSequenceLayout())
	if err != nil {
		t.Fatal(err)
	}
	if err := b.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	return a, b
}

// TestSeqLayoutOldCzxidAfterReap: a Session whose handles used the lock
// path before it was reaped and re-created (it remembers the path's old
// czxid) locks it again, with the old handle and with a new one: each
// makes its node under the new czxid (the one made under the old is
// deleted), waits behind the rival that holds, and holds only once the
// rival unlocked; nothing of theirs is left.
func TestSeqLayoutOldCzxidAfterReap(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s1, s2 := newSession(t, srv.Servers()), newSession(t, srv.Servers())
	p := lockPath(t, "seq")
	a, b := brokenThenReused(ctx, t, s1, s2, p)
	if err := a.Unlock(ctx); !errors.Is(err, zklock.ErrLockLost) {
		t.Fatalf("a's Unlock after the Break: %v, want ErrLockLost", err)
	}
	st, ok, err := s2.Client().Exists(ctx, p)
	if err != nil || !ok {
		t.Fatalf("the re-created path: %v, %v", ok, err)
	}
	prefix := strconv.FormatInt(st.Czxid, 16) + "-seqlock-"
	c, err := zklock.NewMutex(s1, p, zklock.WithSequenceLayout())
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range []*zklock.Mutex{a, c} {
		if err := m.TryLock(ctx); !errors.Is(err, zklock.ErrLocked) {
			t.Fatalf("TryLock of s1 while b holds: %v, want ErrLocked", err)
		}
	}
	got := make(chan error, 1)
	go func() { got <- a.Lock(ctx) }()
	eventually(t, 20*time.Second, "a waits behind b", func() bool {
		cs, err := zklock.Contenders(ctx, s2, p)
		return err == nil && len(cs) == 2
	})
	cs, err := zklock.Contenders(ctx, s2, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range cs {
		if name := x.Path[len(p)+1:]; !strings.HasPrefix(name, prefix) {
			t.Errorf("contender %s: want a name starting %s (the path's czxid)", name, prefix)
		}
	}
	select {
	case err := <-got:
		t.Fatalf("a's Lock returned %v while b holds", err)
	case <-time.After(200 * time.Millisecond):
	}
	if err := b.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("a's Lock after b's Unlock: %v", err)
	}
	if err := a.Unlock(ctx); err != nil {
		t.Fatalf("a's Unlock: %v", err)
	}
	names, _, err := s2.Client().Children(ctx, p)
	if err != nil && !errors.Is(err, zk.ErrNoNode) {
		t.Fatal(err)
	}
	if len(names) != 0 {
		t.Errorf("left under the path: %v", names)
	}
}
