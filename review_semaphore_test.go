package zklock_test

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// rvSemLease is a lease the test holds, with the permits it counts.
type rvSemLease struct {
	l   *zklock.Lease
	n   int
	who string
}

// Semaphore of limit 2, one handle shared by goroutines of one session: A
// and B hold a lease each, C waits for 2, a rival of another session waits
// for 1, and a TryAcquire(1) spinner runs beside them. The session expires
// on the server. Every success must leave the live leases (Lost open)
// within the limit, and its own nodes standing as the session's.
func TestReviewSemaphoreSharedExpire(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		opts []zklock.Option
	}{{"Default", nil}, {"PermitLayout", []zklock.Option{zklock.WithPermitLayout()}}} {
		t.Run(tc.name, func(t *testing.T) {
			const limit = 2
			r := newSemRig(t, limit, tc.opts)
			ctx, c, px, ours, obs, rs, sem, rsem := r.ctx, r.c, r.px, r.ours, r.obs, r.rs, r.sem, r.rsem
			var mu sync.Mutex
			live := map[*zklock.Lease]rvSemLease{}
			var violations []string
			got := func(who string, l *zklock.Lease, n int, session *zklock.Session) {
				mu.Lock()
				live[l] = rvSemLease{l, n, who}
				sum := 0
				var names []string
				for _, x := range live {
					if !isClosed(x.l.Lost()) {
						sum += x.n
						names = append(names, fmt.Sprintf("%s(%d)", x.who, x.n))
					}
				}
				mu.Unlock()
				var v []string
				if sum > limit {
					v = append(v, fmt.Sprintf("%d permits held by live leases %v, limit %d", sum, names, limit))
				}
				if isClosed(l.Lost()) {
					v = append(v, "its Lost is closed")
				}
				for _, node := range zklock.LeaseNodes(l) {
					st, ok, err := obs.Client().Exists(ctx, node)
					if err == nil && (!ok || st.EphemeralOwner != session.SessionID()) {
						v = append(v, "its node "+node+" does not stand as its session's")
					}
				}
				if len(v) > 0 {
					mu.Lock()
					violations = append(violations, fmt.Sprintf("%s returned success: %v", who, v))
					mu.Unlock()
				}
			}
			drop := func(l *zklock.Lease) {
				mu.Lock()
				delete(live, l)
				mu.Unlock()
				_ = l.Release(ctx)
			}
			a, err := sem.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			got("A", a, 1, ours)
			b, err := sem.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			got("B", b, 1, ours)
			waiting := func(n int) func() bool {
				return func() bool { cs, err := zklock.ContendersOf(ctx, sem); return err == nil && len(cs) >= n }
			}
			cgot := make(chan error, 1)
			go func() {
				l, err := sem.Acquire(ctx, 2)
				if err == nil {
					got("C (2 permits)", l, 2, ours)
					time.Sleep(100 * time.Millisecond)
					drop(l)
				}
				cgot <- err
			}()
			eventually(t, 10*time.Second, "C waits", waiting(1))
			rgot := make(chan *zklock.Lease, 1)
			go func() {
				l, err := rsem.Acquire(ctx, 1)
				if err != nil {
					t.Errorf("rival: %v", err)
					rgot <- nil
					return
				}
				got("rival", l, 1, rs)
				rgot <- l
			}()
			time.Sleep(500 * time.Millisecond)
			stop := make(chan struct{})
			spun := make(chan int, 1)
			go func() {
				n := 0
				defer func() { spun <- n }()
				for range 300 {
					select {
					case <-stop:
						return
					case <-time.After(30 * time.Millisecond):
					}
					tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
					l, err := sem.TryAcquire(tctx, 1)
					cancel()
					if err == nil {
						n++
						got("TryAcquire", l, 1, ours)
						time.Sleep(50 * time.Millisecond)
						drop(l)
					}
				}
			}()
			if err := zktest.ExpireSession(ctx, c, px, ours.SessionID()); err != nil {
				t.Fatal(err)
			}
			var rl *zklock.Lease
			select {
			case rl = <-rgot:
			case <-time.After(20 * time.Second):
				t.Fatal("the rival never held")
			}
			time.Sleep(time.Second)
			drop(a)
			drop(b)
			time.Sleep(time.Second)
			if rl != nil {
				drop(rl)
			}
			select {
			case err := <-cgot:
				if err != nil {
					t.Errorf("C: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Error("C never returned")
			}
			close(stop)
			t.Logf("TryAcquire succeeded %d times", <-spun)
			eventually(t, 10*time.Second, "nothing left on the server", func() bool {
				hs, err := zklock.HoldersOf(ctx, sem)
				if err != nil {
					return false
				}
				cs, err := zklock.ContendersOf(ctx, sem)
				return err == nil && len(hs)+len(cs) == 0
			})
			for _, v := range violations {
				t.Error(v)
			}
		})
	}
}

// semRig is the set-up of TestReviewSemaphoreSharedExpire, on the shared
// server: our session reaches it through px (ExpireSession cuts it there
// and reads the server's sessions, c: nothing faults the server), the
// rival's and an observer's directly; sem and rsem are ours and the
// rival's Semaphore of limit, with opts.
type semRig struct {
	ctx           context.Context
	c             *zktest.Cluster
	px            *zktest.Proxy
	ours, obs, rs *zklock.Session
	sem, rsem     *zklock.Semaphore
}

func newSemRig(t *testing.T, limit int, opts []zklock.Option) *semRig {
	t.Helper()
	t.Parallel()
	srv := shared(t)
	px := zktest.NewProxy(t, srv.Servers())
	r := &semRig{ctx: ctxFor(t), c: sharedZK.c, px: px, ours: newSession(t, px.Addrs()),
		obs: newSession(t, srv.Servers()), rs: newSession(t, srv.Servers())}
	path := lockPath(t, "sem")
	var err error
	if r.sem, err = zklock.NewSemaphore(r.ours, path, limit, opts...); err != nil {
		t.Fatal(err)
	}
	if r.rsem, err = zklock.NewSemaphore(r.rs, path, limit, opts...); err != nil {
		t.Fatal(err)
	}
	return r
}
