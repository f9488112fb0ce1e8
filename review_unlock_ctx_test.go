//go:build review

package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// A Mutex holder Unlocks with a ctx that ends after its delete reached the
// server but before the reply came back (a slow link). Unlock returns the
// ctx's error, and the handle says it still holds (Unlock may be called
// again). Its node is gone and a rival of another session holds: measured
// as ATTACKS.md measures a hold's end, the holder's loss signal must have
// fired by then (or the handle must not claim to hold).
func TestReviewBreak_UnlockCtxEndsAfterDelete(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	px := zktest.NewProxy(t, c.Servers())
	s := newSession(t, px.Addrs())
	m, err := zklock.NewMutex(s, path)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewMutex(newSession(t, c.Servers()), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(m.Guard())
	got := make(chan error, 1)
	go func() { got <- rival.Lock(ctx) }()
	eventually(t, 10*time.Second, "rival queued", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 2 })
	px.SetLatency(300 * time.Millisecond)
	uctx, cancel := context.WithTimeout(ctx, 450*time.Millisecond)
	uerr := m.Unlock(uctx)
	cancel()
	t.Logf("Unlock with a 450ms ctx over a 300ms link: %v", uerr)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("rival: %v", err)
		}
	case <-time.After(10 * time.Second):
		px.SetLatency(0)
		t.Skipf("the rival did not hold (Unlock: %v): the delete did not land", uerr)
	}
	held := nodeOf(m.Guard()) != ""
	lost := isClosed(m.Lost())
	if held && !lost {
		t.Errorf("the rival holds %s; our handle still holds %s (Unlock returned %v) with Lost open", nodeOf(rival.Guard()), node, uerr)
	}
	px.SetLatency(0)
	if held {
		t.Logf("second Unlock: %v", m.Unlock(ctx))
	}
	if err := rival.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 0 })
}

// The same, on a ReentrantMutex owner: its Unlock (count 1) ends with the
// ctx after the delete landed, so the count stays 1; a rival of another
// session holds. The owner's next Lock, a blocking call, re-enters: it
// must not return nil for a hold whose node is gone while the rival holds.
func TestReviewBreak_ReentrantLockAfterUnlockCtxEnds(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	px := zktest.NewProxy(t, c.Servers())
	s := newSession(t, px.Addrs())
	obs := newSession(t, c.Servers())
	owner, err := zklock.NewReentrantMutex(s, path)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewMutex(newSession(t, c.Servers()), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := owner.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(owner.Guard())
	got := make(chan error, 1)
	go func() { got <- rival.Lock(ctx) }()
	eventually(t, 10*time.Second, "rival queued", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 2 })
	px.SetLatency(300 * time.Millisecond)
	uctx, cancel := context.WithTimeout(ctx, 450*time.Millisecond)
	uerr := owner.Unlock(uctx)
	cancel()
	t.Logf("Unlock with a 450ms ctx over a 300ms link: %v (hold count %d)", uerr, owner.HoldCount())
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("rival: %v", err)
		}
	case <-time.After(10 * time.Second):
		px.SetLatency(0)
		t.Skipf("the rival did not hold (Unlock: %v): the delete did not land", uerr)
	}
	px.SetLatency(0)
	lerr := owner.Lock(ctx)
	_, exists, xerr := obs.Client().Exists(ctx, node)
	if xerr != nil {
		t.Fatal(xerr)
	}
	if lerr == nil {
		t.Errorf("the owner's Lock returned nil while the rival %s holds (owner's node %s exists: %v, Lost closed: %v, hold count %d)",
			nodeOf(rival.Guard()), node, exists, isClosed(owner.Lost()), owner.HoldCount())
	} else {
		t.Logf("the owner's Lock: %v", lerr)
	}
	for owner.HoldCount() > 0 {
		if err := owner.Unlock(ctx); err != nil {
			t.Logf("owner's Unlock: %v", err)
			break
		}
	}
	if err := rival.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 0 })
}

// As TestReviewBreak_UnlockCtxEndsAfterDelete, for a Semaphore lease (limit
// 1, both layouts), an RWMutex's write lock and a MultiLock: the release's
// ctx ends after its delete landed; a rival of another session holds; the
// holder's loss signal must have fired if its release left it "held".
func TestReviewBreak_ReleaseCtxEndsAfterDelete(t *testing.T) {
	type holder struct {
		release func(context.Context) error
		lost    func() <-chan struct{}
	}
	for _, tc := range []struct {
		name string
		// hold acquires on s and returns the hold; rival blocks on r
		// until it holds, and returns its release.
		hold  func(t *testing.T, ctx context.Context, s *zklock.Session, path string) holder
		rival func(ctx context.Context, r *zklock.Session, path string) (func(context.Context) error, error)
	}{
		{"Semaphore", func(t *testing.T, ctx context.Context, s *zklock.Session, path string) holder {
			sem, err := zklock.NewSemaphore(s, path, 1)
			if err != nil {
				t.Fatal(err)
			}
			l, err := sem.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			return holder{l.Release, l.Lost}
		}, func(ctx context.Context, r *zklock.Session, path string) (func(context.Context) error, error) {
			sem, err := zklock.NewSemaphore(r, path, 1)
			if err != nil {
				return nil, err
			}
			l, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}},
		{"SemaphorePermitLayout", func(t *testing.T, ctx context.Context, s *zklock.Session, path string) holder {
			sem, err := zklock.NewSemaphore(s, path, 1, zklock.WithPermitLayout())
			if err != nil {
				t.Fatal(err)
			}
			l, err := sem.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			return holder{l.Release, l.Lost}
		}, func(ctx context.Context, r *zklock.Session, path string) (func(context.Context) error, error) {
			sem, err := zklock.NewSemaphore(r, path, 1, zklock.WithPermitLayout())
			if err != nil {
				return nil, err
			}
			l, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		}},
		{"RWMutex", func(t *testing.T, ctx context.Context, s *zklock.Session, path string) holder {
			m, err := zklock.NewRWMutex(s, path)
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			return holder{m.Unlock, m.Lost}
		}, func(ctx context.Context, r *zklock.Session, path string) (func(context.Context) error, error) {
			m, err := zklock.NewRWMutex(r, path)
			if err != nil {
				return nil, err
			}
			return m.Unlock, m.Lock(ctx)
		}},
		{"MutexCohort", func(t *testing.T, ctx context.Context, s *zklock.Session, path string) holder {
			m, err := zklock.NewMutex(s, path, zklock.WithCohort(4, 0))
			if err != nil {
				t.Fatal(err)
			}
			if err := m.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			return holder{m.Unlock, m.Lost}
		}, func(ctx context.Context, r *zklock.Session, path string) (func(context.Context) error, error) {
			m, err := zklock.NewMutex(r, path, zklock.WithCohort(4, 0))
			if err != nil {
				return nil, err
			}
			return m.Unlock, m.Lock(ctx)
		}},
		{"MultiLock", func(t *testing.T, ctx context.Context, s *zklock.Session, path string) holder {
			m, err := zklock.NewMutex(s, path)
			if err != nil {
				t.Fatal(err)
			}
			ml, err := zklock.NewMultiLock(m)
			if err != nil {
				t.Fatal(err)
			}
			if err := ml.Lock(ctx); err != nil {
				t.Fatal(err)
			}
			return holder{ml.Unlock, ml.Lost}
		}, func(ctx context.Context, r *zklock.Session, path string) (func(context.Context) error, error) {
			m, err := zklock.NewMutex(r, path)
			if err != nil {
				return nil, err
			}
			return m.Unlock, m.Lock(ctx)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := standalone(t)
			ctx := ctxFor(t)
			path := lockPath(t, "lock")
			px := zktest.NewProxy(t, c.Servers())
			s := newSession(t, px.Addrs())
			h := tc.hold(t, ctx, s, path)
			type rres struct {
				release func(context.Context) error
				err     error
			}
			got := make(chan rres, 1)
			go func() {
				rel, err := tc.rival(ctx, newSession(t, c.Servers()), path)
				got <- rres{rel, err}
			}()
			time.Sleep(time.Second) // the rival queues
			px.SetLatency(300 * time.Millisecond)
			uctx, cancel := context.WithTimeout(ctx, 450*time.Millisecond)
			uerr := h.release(uctx)
			cancel()
			var r rres
			select {
			case r = <-got:
				if r.err != nil {
					t.Fatalf("rival: %v", r.err)
				}
			case <-time.After(10 * time.Second):
				px.SetLatency(0)
				t.Skipf("the rival did not hold (release: %v)", uerr)
			}
			if uerr != nil && !isClosed(h.lost()) {
				t.Errorf("the rival holds; our release returned %v and our Lost is open", uerr)
			} else {
				t.Logf("release: %v, Lost closed: %v", uerr, isClosed(h.lost()))
			}
			px.SetLatency(0)
			if uerr != nil {
				t.Logf("second release: %v", h.release(ctx))
			}
			if err := r.release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// (Held.) A cohort (WithCohort) of two handles of one session: a's Unlock ends with
// its ctx after the cohort's node was deleted; a rival of another session
// holds; b Locks (a local waiter) and a Unlocks again. b's Lock is a
// blocking call: it must not return nil on the cohort's deleted node while
// the rival holds.
func TestReviewCohortHandoffAfterUnlockCtxEnds(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	px := zktest.NewProxy(t, c.Servers())
	s := newSession(t, px.Addrs())
	obs := newSession(t, c.Servers())
	a, err := zklock.NewMutex(s, path, zklock.WithCohort(4, 0))
	if err != nil {
		t.Fatal(err)
	}
	b, err := zklock.NewMutex(s, path, zklock.WithCohort(4, 0))
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewMutex(newSession(t, c.Servers()), path, zklock.WithCohort(4, 0))
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	node := nodeOf(a.Guard())
	got := make(chan error, 1)
	go func() { got <- rival.Lock(ctx) }()
	eventually(t, 10*time.Second, "rival queued", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 2 })
	px.SetLatency(300 * time.Millisecond)
	uctx, cancel := context.WithTimeout(ctx, 450*time.Millisecond)
	uerr := a.Unlock(uctx)
	cancel()
	t.Logf("a's Unlock with a 450ms ctx over a 300ms link: %v", uerr)
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("rival: %v", err)
		}
	case <-time.After(10 * time.Second):
		px.SetLatency(0)
		t.Skipf("the rival did not hold (Unlock: %v)", uerr)
	}
	px.SetLatency(0)
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(ctx) }()
	time.Sleep(300 * time.Millisecond)
	t.Logf("a's second Unlock: %v", a.Unlock(ctx))
	select {
	case err := <-bgot:
		if err == nil {
			_, exists, _ := obs.Client().Exists(ctx, nodeOf(b.Guard()))
			t.Errorf("b's Lock returned nil while the rival %s holds (b's node %s, a's was %s; exists: %v; Lost closed: %v)",
				nodeOf(rival.Guard()), nodeOf(b.Guard()), node, exists, isClosed(b.Lost()))
			_ = b.Unlock(ctx)
		} else {
			t.Logf("b's Lock: %v", err)
		}
	case <-time.After(time.Second):
		t.Log("b waits (behind the rival)")
	}
	if err := rival.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bgot:
		if err == nil {
			_ = b.Unlock(ctx)
		}
	case <-time.After(10 * time.Second):
		t.Error("b never returned after the rival let go")
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 0 })
}

// (Held.) An RWMutex write Unlock ends with its ctx after the delete
// landed; a rival writer holds; Downgrade on the handle (which still says
// it holds the write lock) must not return nil.
func TestReviewDowngradeAfterUnlockCtxEnds(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	px := zktest.NewProxy(t, c.Servers())
	m, err := zklock.NewRWMutex(newSession(t, px.Addrs()), path)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewRWMutex(newSession(t, c.Servers()), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- rival.Lock(ctx) }()
	eventually(t, 10*time.Second, "rival queued", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 2 })
	px.SetLatency(300 * time.Millisecond)
	uctx, cancel := context.WithTimeout(ctx, 450*time.Millisecond)
	uerr := m.Unlock(uctx)
	cancel()
	select {
	case err := <-got:
		if err != nil {
			t.Fatalf("rival: %v", err)
		}
	case <-time.After(10 * time.Second):
		px.SetLatency(0)
		t.Skipf("the rival did not hold (Unlock: %v)", uerr)
	}
	px.SetLatency(0)
	if err := m.Downgrade(ctx); err == nil {
		t.Errorf("Downgrade returned nil while the rival writer %s holds (Unlock had returned %v)", nodeOf(rival.Guard()), uerr)
		_ = m.RUnlock(ctx)
	} else {
		t.Logf("Unlock: %v; Downgrade: %v", uerr, err)
	}
	_ = m.Unlock(ctx)
	if err := rival.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, rival); return err == nil && len(cs) == 0 })
}
