package zklock_test

// Adversarial review (r43): several goroutines on ONE shared handle while
// the hold ends (server-side session expiry, WithMaxHold passing, Break
// from another session), a rival of another session contending, and a
// TryLock spinner beside the blocking Locks. Every success any of them
// returns is measured as the contract states it, at the moment it
// returns: no rival holds exclusively, the hold's Lost is open, and its
// node stands on the server as the handle's current session's.

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// rvHold is one hold a call returned.
type rvHold struct {
	lost    <-chan struct{}
	node    string
	release func(context.Context) error
}

// rvHandle is a handle as the review drives it.
type rvHandle struct {
	acquire func(context.Context) (*rvHold, error)
	try     func(context.Context) (*rvHold, error) // nil: none
	count   func(context.Context) (int, error)     // contenders on the path
}

type rvPrim struct {
	name  string
	make  func(s *zklock.Session, path string, opts ...zklock.Option) (*rvHandle, error)
	opts  []zklock.Option // ours and the rival's
	local bool            // waiters of one handle wait in the process (cohort)
}

// rvExclusive is what the review drives of a Mutex or an RWMutex's write
// side.
type rvExclusive interface {
	Lock(context.Context) error
	TryLock(context.Context) error
	Unlock(context.Context) error
	Lost() <-chan struct{}
	Guard() *zk.CheckOp
}

// rvLocker is the rvHandle of an exclusive lock made by mk.
func rvLocker[T rvExclusive](mk func(*zklock.Session, string, ...zklock.Option) (T, error)) func(*zklock.Session, string, ...zklock.Option) (*rvHandle, error) {
	return func(s *zklock.Session, path string, opts ...zklock.Option) (*rvHandle, error) {
		m, err := mk(s, path, opts...)
		if err != nil {
			return nil, err
		}
		get := func(err error) (*rvHold, error) {
			if err != nil {
				return nil, err
			}
			return &rvHold{lost: m.Lost(), node: nodeOf(m.Guard()), release: m.Unlock}, nil
		}
		return &rvHandle{
			acquire: func(ctx context.Context) (*rvHold, error) { return get(m.Lock(ctx)) },
			try:     func(ctx context.Context) (*rvHold, error) { return get(m.TryLock(ctx)) },
			count: func(ctx context.Context) (int, error) {
				cs, err := zklock.ContendersOf(ctx, m)
				return len(cs), err
			},
		}, nil
	}
}

var (
	rvMutex   = rvLocker(zklock.NewMutex)
	rvRWMutex = rvLocker(zklock.NewRWMutex)
)

// rvMutexPerCall makes a new handle of the session for every call: with
// WithCohort they are one cohort, whose waiters wait in the process.
func rvMutexPerCall(s *zklock.Session, path string, opts ...zklock.Option) (*rvHandle, error) {
	first, err := zklock.NewMutex(s, path, opts...)
	if err != nil {
		return nil, err
	}
	get := func(try bool) func(ctx context.Context) (*rvHold, error) {
		return func(ctx context.Context) (*rvHold, error) {
			m, err := zklock.NewMutex(s, path, opts...)
			if err != nil {
				return nil, err
			}
			if try {
				err = m.TryLock(ctx)
			} else {
				err = m.Lock(ctx)
			}
			if err != nil {
				return nil, err
			}
			return &rvHold{lost: m.Lost(), node: nodeOf(m.Guard()), release: m.Unlock}, nil
		}
	}
	return &rvHandle{
		acquire: get(false),
		try:     get(true),
		count: func(ctx context.Context) (int, error) {
			cs, err := zklock.ContendersOf(ctx, first)
			return len(cs), err
		},
	}, nil
}

func rvSemaphore(s *zklock.Session, path string, opts ...zklock.Option) (*rvHandle, error) {
	m, err := zklock.NewSemaphore(s, path, 1, opts...)
	if err != nil {
		return nil, err
	}
	get := func(l *zklock.Lease, err error) (*rvHold, error) {
		if err != nil {
			return nil, err
		}
		return &rvHold{lost: l.Lost(), node: nodeOf(l.Guard()), release: l.Release}, nil
	}
	return &rvHandle{
		acquire: func(ctx context.Context) (*rvHold, error) { return get(m.Acquire(ctx, 1)) },
		try:     func(ctx context.Context) (*rvHold, error) { return get(m.TryAcquire(ctx, 1)) },
		count: func(ctx context.Context) (int, error) {
			hs, err := zklock.HoldersOf(ctx, m)
			if err != nil {
				return 0, err
			}
			cs, err := zklock.ContendersOf(ctx, m)
			return len(hs) + len(cs), err
		},
	}, nil
}

// rvFault ends the first holder's hold. ours is the shared handle's
// session (through px), obs another session.
type rvFault struct {
	name string
	opts []zklock.Option // ours only
	do   func(ctx context.Context, t *testing.T, c *zktest.Cluster, px *zktest.Proxy, ours, obs *zklock.Session, path string, rivalHolds func() bool)
}

var rvExpire = rvFault{name: "Expire", do: func(ctx context.Context, t *testing.T, c *zktest.Cluster, px *zktest.Proxy, ours, _ *zklock.Session, _ string, _ func() bool) {
	old := ours.SessionID()
	if err := zktest.ExpireSession(ctx, c, px, old); err != nil {
		t.Fatalf("ExpireSession: %v", err)
	}
}}

var rvMaxHold = rvFault{name: "MaxHold", opts: []zklock.Option{zklock.WithMaxHold(1500 * time.Millisecond)},
	do: func(context.Context, *testing.T, *zktest.Cluster, *zktest.Proxy, *zklock.Session, *zklock.Session, string, func() bool) {
	}}

// rvBreak breaks the first contender, ours (each in turn), until the
// rival's node is first.
var rvBreak = rvFault{name: "Break", do: func(ctx context.Context, t *testing.T, _ *zktest.Cluster, _ *zktest.Proxy, ours, obs *zklock.Session, path string, rivalHolds func() bool) {
	for range 20 {
		if rivalHolds() {
			return
		}
		cs, err := zklock.NewMutex(obs, path)
		if err == nil {
			if l, err := zklock.ContendersOf(ctx, cs); err == nil && len(l) > 0 && l[0].Session != ours.SessionID() {
				return // the rival is first
			}
		}
		if bs, err := zklock.Break(ctx, obs, path, true); err == nil && len(bs) > 0 && bs[0].Session != ours.SessionID() {
			t.Logf("Break deleted a node of session %x, not ours", bs[0].Session)
		}
		time.Sleep(400 * time.Millisecond)
	}
}}

// rvSharedLoss: A holds on a shared handle, B and C Lock it too (and a
// TryLock spinner runs beside them); the fault ends A's hold; a rival of
// another session acquires; A unlocks late. Every success is measured.
func rvSharedLoss(t *testing.T, p rvPrim, f rvFault) {
	t.Parallel()
	srv := shared(t)
	c := sharedZK.c // ExpireSession reads its sessions (dump); nothing here faults the server
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	px := zktest.NewProxy(t, srv.Servers())
	ours := newSession(t, px.Addrs())
	obs := newSession(t, srv.Servers())
	rs := newSession(t, srv.Servers())
	m, err := p.make(ours, path, append(append([]zklock.Option{}, p.opts...), f.opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	rival, err := p.make(rs, path, p.opts...)
	if err != nil {
		t.Fatal(err)
	}

	var rivalHolding atomic.Bool
	var mu sync.Mutex
	var violations []string
	// inSlot counts our holds returned and whose release has not begun:
	// the next holder may be handed the lock as soon as a release's
	// delete is done (a cohort's local handoff: within the release), so
	// counting up to the release's return would count a legitimate
	// handover as two holds at once.
	var inSlot atomic.Int32
	check := func(who string, h *rvHold) {
		rh := rivalHolding.Load()
		lost := isClosed(h.lost)
		n := inSlot.Add(1)
		var v []string
		if rh {
			v = append(v, "a rival of another session holds")
		}
		if n > 1 {
			v = append(v, fmt.Sprintf("%d holds of the handle returned at once", n))
		}
		if lost {
			v = append(v, "its Lost is closed")
		}
		st, ok, err := obs.Client().Exists(ctx, h.node)
		switch {
		case err != nil:
			t.Logf("%s: Exists(%s): %v", who, h.node, err)
		case !ok:
			v = append(v, "its node "+h.node+" is gone")
		case st.EphemeralOwner != ours.SessionID():
			v = append(v, fmt.Sprintf("its node %s is session %x's, the handle's session is %x", h.node, st.EphemeralOwner, ours.SessionID()))
		}
		if len(v) > 0 {
			mu.Lock()
			violations = append(violations, fmt.Sprintf("%s returned success: %s", who, strings.Join(v, "; ")))
			mu.Unlock()
		}
		time.Sleep(50 * time.Millisecond)
		inSlot.Add(-1)
		_ = h.release(ctx)
	}

	a, err := m.acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	queued := func(n int) func() bool {
		return func() bool { k, err := m.count(ctx); return err == nil && k >= n }
	}
	type res struct {
		who string
		err error
	}
	results := make(chan res, 2)
	for i, who := range []string{"B", "C"} {
		go func() {
			h, err := m.acquire(ctx)
			if err == nil {
				check(who+"'s blocking call", h)
			}
			results <- res{who, err}
		}()
		if p.local {
			time.Sleep(300 * time.Millisecond) // a cohort's waiter waits in the process
		} else {
			eventually(t, 10*time.Second, who+" queued", queued(i+2))
		}
	}
	stop := make(chan struct{})
	spun := make(chan int, 1)
	go func() {
		n := 0
		defer func() { spun <- n }()
		for range 400 {
			select {
			case <-stop:
				return
			case <-time.After(30 * time.Millisecond):
			}
			tctx, cancel := context.WithTimeout(ctx, 5*time.Second)
			h, err := m.try(tctx)
			cancel()
			if err == nil {
				n++
				check("TryLock", h)
			}
		}
	}()

	var rivalH *rvHold
	rivalGot := make(chan error, 1)
	go func() {
		h, err := rival.acquire(ctx)
		if err == nil {
			rivalH = h
			rivalHolding.Store(true)
		}
		rivalGot <- err
	}()
	if p.local {
		eventually(t, 10*time.Second, "the rival queued", queued(2))
	} else {
		eventually(t, 10*time.Second, "the rival queued", queued(4))
	}
	f.do(ctx, t, c, px, ours, obs, path, rivalHolding.Load)
	select {
	case err := <-rivalGot:
		if err != nil {
			t.Fatalf("rival: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the rival never held")
	}
	time.Sleep(time.Second) // B, C and TryLock may (wrongly) return now
	aerr := a.release(ctx)
	time.Sleep(time.Second) // likewise, after A let go
	rivalHolding.Store(false)
	if err := rivalH.release(ctx); err != nil {
		t.Errorf("rival's release: %v", err)
	}
	for range 2 {
		select {
		case r := <-results:
			if r.err != nil {
				t.Errorf("%s: %v", r.who, r.err)
			}
		case <-time.After(20 * time.Second):
			t.Error("B or C never returned")
		}
	}
	close(stop)
	n := <-spun
	eventually(t, 10*time.Second, "nothing left on the server", func() bool { k, err := m.count(ctx); return err == nil && k == 0 })
	t.Logf("A's release: %v; TryLock succeeded %d times", aerr, n)
	for _, v := range violations {
		t.Error(v)
	}
}

var rvPrims = []rvPrim{
	{name: "Mutex", make: rvMutex},
	{name: "MutexCohort", make: rvMutex, local: true, opts: []zklock.Option{zklock.WithCohort(4, 0)}},
	{name: "MutexCohortHandles", make: rvMutexPerCall, local: true, opts: []zklock.Option{zklock.WithCohort(4, 0)}},
	{name: "MutexSeqLayout", make: rvMutex, opts: []zklock.Option{zklock.WithSequenceLayout()}},
	{name: "RWMutex", make: rvRWMutex},
	{name: "Semaphore", make: rvSemaphore},
	{name: "SemaphorePermitLayout", make: rvSemaphore, opts: []zklock.Option{zklock.WithPermitLayout()}},
}

func rvRun(t *testing.T, f rvFault, skip func(rvPrim) bool) {
	t.Parallel()
	for _, p := range rvPrims {
		if skip != nil && skip(p) {
			continue
		}
		t.Run(p.name, func(t *testing.T) { rvSharedLoss(t, p, f) })
	}
}

func TestReviewSharedHandleExpire(t *testing.T) { rvRun(t, rvExpire, nil) }

func TestReviewSharedHandleMaxHold(t *testing.T) {
	// WithMaxHold applies to Mutex and RWMutex (not with a cohort or the
	// sequence layout).
	rvRun(t, rvMaxHold, func(p rvPrim) bool { return p.name != "Mutex" && p.name != "RWMutex" })
}

func TestReviewSharedHandleBreak(t *testing.T) {
	rvRun(t, rvBreak, func(p rvPrim) bool { return strings.HasPrefix(p.name, "Semaphore") })
}
