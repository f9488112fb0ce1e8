package zklock_test

import (
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// TestContendersEveryKind: the package func lists any kind of primitive's
// path, holders first (Holds), then the waiters in grant order.
func TestContendersEveryKind(t *testing.T) {
	t.Parallel()
	ctx := ctxFor(t)
	srv := shared(t)
	s1 := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	want := func(path string, holds, waits int, kind zklock.Kind) {
		t.Helper()
		var cs []zklock.Contender
		eventually(t, 10*time.Second, path+" listed", func() bool {
			var err error
			cs, err = zklock.Contenders(ctx, s2, path)
			return err == nil && len(cs) == holds+waits
		})
		for i, c := range cs {
			if c.Holds != (i < holds) || (kind != "" && c.Kind != kind) {
				t.Errorf("%s: contender %d of %d: holds %v kind %s, want %d holders first, kind %s", path, i, len(cs), c.Holds, c.Kind, holds, kind)
			}
			if i > 0 && c.Holds == cs[i-1].Holds && c.Seq < cs[i-1].Seq {
				t.Errorf("%s: %v before %v", path, cs[i-1], c)
			}
		}
	}
	// Mutex: one holder, one waiter.
	mp := lockPath(t, "mutex")
	m1, _ := zklock.NewMutex(s1, mp)
	m2, _ := zklock.NewMutex(s2, mp)
	if err := m1.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- m2.Lock(ctx) }()
	want(mp, 1, 1, zklock.KindMutex)
	if err := m1.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	want(mp, 1, 0, zklock.KindMutex)
	if err := m2.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	want(mp, 0, 0, "")

	// RWMutex: two readers hold, a writer waits.
	rp := lockPath(t, "rw")
	r1, _ := zklock.NewRWMutex(s1, rp)
	r2, _ := zklock.NewRWMutex(s1, rp)
	w, _ := zklock.NewRWMutex(s2, rp)
	if err := r1.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := r2.RLock(ctx); err != nil {
		t.Fatal(err)
	}
	go func() { got <- w.Lock(ctx) }()
	want(rp, 2, 1, "")
	if err := errors.Join(r1.RUnlock(ctx), r2.RUnlock(ctx), <-got, w.Unlock(ctx)); err != nil {
		t.Fatal(err)
	}

	// Semaphore of 1: a lease holds, another client waits.
	sp := lockPath(t, "sem")
	a, _ := zklock.NewSemaphore(s1, sp, 1)
	b, _ := zklock.NewSemaphore(s2, sp, 1)
	la, err := a.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	lb := make(chan *zklock.Lease, 1)
	go func() { l, err := b.Acquire(ctx, 1); got <- err; lb <- l }()
	want(sp, 1, 1, "") // a lease and a node of the queue for leases
	if err := la.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := (<-lb).Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Election: the leader holds, the other candidate waits.
	ep := lockPath(t, "election")
	e1, _ := zklock.NewElection(s1, ep)
	e2, _ := zklock.NewElection(s2, ep)
	if _, err := e1.Campaign(ctx, []byte("one")); err != nil {
		t.Fatal(err)
	}
	go func() { _, err := e2.Campaign(ctx, []byte("two")); got <- err }()
	want(ep, 1, 1, zklock.KindMutex)
	cs, _ := zklock.Contenders(ctx, s2, ep)
	if string(cs[0].Data) != "one" || string(cs[1].Data) != "two" {
		t.Errorf("candidates %q, %q, want one, two", cs[0].Data, cs[1].Data)
	}
	if err := e1.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := e2.Resign(ctx); err != nil {
		t.Fatal(err)
	}

	if _, err := zklock.Contenders(ctx, s1, "relative"); !errors.Is(err, zklock.ErrInvalidArgument) {
		t.Errorf("Contenders of a relative path: %v, want ErrInvalidArgument", err)
	}
}
