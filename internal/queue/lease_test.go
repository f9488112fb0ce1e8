package queue_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

const (
	sem       = "/sem/s"
	semLocks  = sem + "/locks"
	semLeases = sem + "/leases"
)

func leases(c queue.Conn, limit int) *queue.Leases {
	return &queue.Leases{Conn: c, Dir: sem, Limit: limit}
}

type grant struct {
	g   *queue.Grant
	err error
}

// goLeases runs l.Acquire on its own goroutine; the returned cancel ends
// it. At cleanup it is cancelled and waited for.
func goLeases(t *testing.T, l *queue.Leases, r queue.LeaseRequest) (<-chan grant, context.CancelFunc) {
	ctx, cancel := context.WithCancel(testCtx(t))
	out := make(chan grant, 1)
	done := make(chan struct{})
	go func() {
		defer close(done)
		g, err := l.Acquire(ctx, r)
		out <- grant{g, err}
	}()
	t.Cleanup(func() { cancel(); <-done })
	return out, cancel
}

func granted(t *testing.T, ch <-chan grant) *queue.Grant {
	t.Helper()
	select {
	case r := <-ch:
		if r.err != nil {
			t.Fatalf("Acquire: %v", r.err)
		}
		return r.g
	case <-testCtx(t).Done():
		t.Fatal("Acquire did not return")
		return nil
	}
}

// lease acquires leases that must be granted at once.
func lease(t *testing.T, c *queuetest.Conn, limit int, r queue.LeaseRequest) *queue.Grant {
	t.Helper()
	g, err := leases(c, limit).Acquire(testCtx(t), r)
	if err != nil {
		t.Fatalf("Acquire: %v", err)
	}
	return g
}

func releaseLeases(t *testing.T, c *queuetest.Conn, g *queue.Grant) {
	t.Helper()
	for _, h := range g.Held {
		if err := leases(c, 0).LeaseQueue().Release(testCtx(t), h); err != nil {
			t.Fatal(err)
		}
	}
}

// Under the limit, the fast path grants without touching the mutex: no
// lock node, no watch; N leases are granted together.
func TestLeaseFastPath(t *testing.T) {
	s := queuetest.NewServer()
	c := s.Connect()
	g := lease(t, c, 3, queue.LeaseRequest{N: 2, Data: []byte("d")})
	if len(g.Held) != 2 || g.Held[0].Path == g.Held[1].Path || g.DirCzxid != czxid(t, s, semLeases) {
		t.Fatalf("grant %+v", g)
	}
	for _, h := range g.Held {
		if data, st, ok := s.Node(h.Path); !ok || string(data) != "d" || st.Czxid != h.Token ||
			st.EphemeralOwner != c.SessionID() || !slices.Contains(c.Tracked(), h.Path) {
			t.Fatalf("lease %+v: node %q %+v", h, data, st)
		}
	}
	if len(created(s, c.SessionID(), semLocks)) != 0 || len(s.Watches())+len(s.ChildWatches()) != 0 {
		t.Fatal("the fast path used the mutex or a watch")
	}
	releaseLeases(t, c, g)
	noNodes(t, s, c.SessionID())
}

// Over the limit, the fast path deletes its leases before it queues on the
// mutex; the mutex holder then waits on the lease set and is granted a
// lease made under the mutex.
func TestLeaseFastPathOver(t *testing.T) {
	s := queuetest.NewServer()
	rival, c := s.Connect(), s.Connect()
	rg := lease(t, rival, 1, queue.LeaseRequest{N: 1})
	ch, _ := goLeases(t, leases(c, 1), queue.LeaseRequest{N: 1})
	await(t, s, "the mutex holder watches the leases", func() bool { return s.ChildWatching(semLeases) == 1 })
	mine := created(s, c.SessionID(), sem)
	if len(mine) != 3 || s.Exists(mine[0]) {
		t.Fatalf("created %v, want a fast-path lease (deleted), the mutex node, a lease", mine)
	}
	h := s.History()
	deleted := slices.IndexFunc(h, func(x queuetest.Change) bool { return !x.Created && x.Path == mine[0] })
	mutex := slices.IndexFunc(h, func(x queuetest.Change) bool { return x.Created && x.Path == mine[1] })
	if deleted < 0 || deleted > mutex || len(created(s, c.SessionID(), semLocks)) != 1 {
		t.Fatalf("history %v: the fast-path lease must go before the mutex node %s is made", h, mine[1])
	}
	releaseLeases(t, rival, rg)
	g := granted(t, ch)
	if len(g.Held) != 1 || g.Held[0].Path != mine[2] || s.Exists(mine[1]) {
		t.Fatalf("granted %+v; created %v; mutex node left: %v", g.Held[0], mine, s.Exists(mine[1]))
	}
}

// Only the mutex holder watches the lease set; the others wait on the
// mutex, each on its predecessor, and go straight to it without a fast
// path while it is taken.
func TestLeaseSlowPath(t *testing.T) {
	s := queuetest.NewServer()
	rival := s.Connect()
	rg := lease(t, rival, 1, queue.LeaseRequest{N: 1})
	conns := []*queuetest.Conn{s.Connect(), s.Connect(), s.Connect()}
	var chs []<-chan grant
	var mutexes []string
	for i, c := range conns {
		ch, _ := goLeases(t, leases(c, 1), queue.LeaseRequest{N: 1})
		chs = append(chs, ch)
		if i == 0 {
			await(t, s, "the first watches the leases", func() bool { return s.ChildWatching(semLeases) == 1 })
		} else {
			pred := mutexes[i-1]
			await(t, s, "a waiter watches "+pred, func() bool { return s.Watching(pred) == 1 })
		}
		mutexes = append(mutexes, newNode(t, s, semLocks, mutexes...))
	}
	for i, c := range conns[1:] {
		if len(created(s, c.SessionID(), semLeases)) != 0 || !slices.Equal(watchesBy(s, c.SessionID()), mutexes[i:i+1]) {
			t.Fatalf("waiter %d made a lease or watched %v", i+1, watchesBy(s, c.SessionID()))
		}
	}
	ids := []int64{conns[0].SessionID(), conns[1].SessionID(), conns[2].SessionID()}
	if got := childWatchers(s); !slices.Equal(got, ids[:1]) {
		t.Fatalf("sessions watching the leases: %v, want only the mutex holder %d", got, ids[0])
	}
	held, owner := rg, rival
	for i, c := range conns {
		releaseLeases(t, owner, held)
		held, owner = granted(t, chs[i]), c
		if i+1 < len(conns) {
			await(t, s, "the next mutex holder watches the leases", func() bool {
				return slices.Equal(childWatchers(s), ids[:i+2]) && s.ChildWatching(semLeases) == 1
			})
		}
	}
	for _, m := range mutexes {
		if s.Exists(m) {
			t.Fatalf("mutex node %s left", m)
		}
	}
}

// The mutex's release after a grant is a round trip: a process frozen in
// it may run again past its ownership deadline, its leases handed on. The
// grant is then given up, not returned: its lease goes with the epoch, and
// Acquire starts over in the next one (seed 20261125: a lease returned 3.6s
// after its grant, lost 1.7ms later).
func TestLeaseSlowGrantOutlivedByItsEpoch(t *testing.T) {
	s := queuetest.NewServer()
	rival, c := s.Connect(), s.Connect()
	rg := lease(t, rival, 1, queue.LeaseRequest{N: 1})
	ch, _ := goLeases(t, leases(c, 1), queue.LeaseRequest{N: 1})
	await(t, s, "the waiter watches the leases", func() bool { return s.ChildWatching(semLeases) == 1 })
	c.Inject(queuetest.OpDiscard, queuetest.Fault{Before: func() { c.EndEpoch(); c.NewEpoch() }})
	releaseLeases(t, rival, rg)
	g := granted(t, ch)
	consumed(t, c)
	// made: the fast path's lease (over the limit, discarded), the lease
	// granted in the ended epoch, and the one granted in the next.
	made := created(s, c.SessionID(), semLeases)
	if len(made) != 3 || s.Exists(made[0]) || s.Exists(made[1]) {
		t.Fatalf("leases made %v; want 3, only the last left", made)
	}
	if len(g.Held) != 1 || g.Held[0].Path != made[2] || !s.Exists(made[2]) {
		t.Fatalf("granted %+v, want %s", g.Held[0], made[2])
	}
	select {
	case <-g.Held[0].Epoch.Done:
		t.Fatal("the grant's epoch has ended")
	default:
	}
}

// childWatchers returns the sessions that watched the lease set, in the
// order of their first watch.
func childWatchers(s *queuetest.Server) []int64 {
	var out []int64
	for _, w := range s.ChildWatches() {
		if w.Path != semLeases || !slices.Contains(out, w.Session) {
			out = append(out, w.Session)
		}
	}
	return out
}

// Leases are granted all or none: a Try that finds too few free fails
// with ErrFull and deletes every lease it made; a failure to create the
// second lease deletes the first; a failing Check grants nothing.
func TestLeaseAllOrNothing(t *testing.T) {
	errCheck := errors.New("check failed")
	for _, tc := range []struct {
		name    string
		r       queue.LeaseRequest
		faults  []queuetest.Fault
		want    error
		creates int // lease nodes made
	}{
		{name: "try, one free of two", r: queue.LeaseRequest{N: 2, Try: true}, want: errs.ErrNotAcquired, creates: 2},
		{name: "second create refused", r: queue.LeaseRequest{N: 2, Try: true}, want: client.ErrNoAuth, creates: 1,
			faults: []queuetest.Fault{{}, {Lost: true, Err: client.ErrNoAuth}}},
		{name: "check fails", r: queue.LeaseRequest{N: 1, Check: func(context.Context, int64) error { return errCheck }},
			want: errCheck, creates: 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := queuetest.NewServer()
			rival, c := s.Connect(), s.Connect()
			lease(t, rival, 2, queue.LeaseRequest{N: 1})
			for _, f := range tc.faults {
				c.Inject(queuetest.OpCreate, f)
			}
			g, err := leases(c, 2).Acquire(testCtx(t), tc.r)
			consumed(t, c)
			if !errors.Is(err, tc.want) || g != nil {
				t.Fatalf("Acquire: %+v, %v; want %v", g, err, tc.want)
			}
			if got := len(created(s, c.SessionID(), semLeases)); got != tc.creates {
				t.Fatalf("%d leases made, want %d", got, tc.creates)
			}
			noNodes(t, s, c.SessionID())
		})
	}
}

// The Check runs with the incarnation of the lease set; a Try that finds
// waiters on the mutex fails without making a lease.
func TestLeaseTry(t *testing.T) {
	s := queuetest.NewServer()
	rival, waiter, c := s.Connect(), s.Connect(), s.Connect()
	var dirCzxid int64
	lease(t, rival, 1, queue.LeaseRequest{N: 1, Check: func(_ context.Context, z int64) error { dirCzxid = z; return nil }})
	if dirCzxid != czxid(t, s, semLeases) {
		t.Fatalf("Check got %d, want the lease set's czxid %d", dirCzxid, czxid(t, s, semLeases))
	}
	goLeases(t, leases(waiter, 1), queue.LeaseRequest{N: 1})
	await(t, s, "a waiter holds the mutex", func() bool { return s.ChildWatching(semLeases) == 1 })
	before := s.Calls(queuetest.OpCreate)
	// With a higher limit, only the waiter can make the Try fail.
	if _, err := leases(c, 5).Acquire(testCtx(t), queue.LeaseRequest{N: 1, Try: true}); !errors.Is(err, errs.ErrNotAcquired) {
		t.Fatalf("Try with waiters: %v, want ErrFull", err)
	}
	if s.Calls(queuetest.OpCreate) != before {
		t.Fatal("a Try overtook the waiters")
	}
}
