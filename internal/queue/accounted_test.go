package queue_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// Every create is accounted for (DESIGN.md): whatever happens around a
// create, an acquisition that fails leaves no node of ours in the tree.
// Another session holds the lock throughout, so the acquisition fails by a
// Try refusal or by its ctx ending at the stage named.
func TestEveryCreateAccountedFor(t *testing.T) {
	type env struct {
		s      *queuetest.Server
		c      *queuetest.Conn
		cancel func()
	}
	for _, tc := range []struct {
		name  string
		fault func(e env) queuetest.Fault // on our first create
		try   bool
		// until, if set, is the state in which the ctx is cancelled.
		until func(e env) bool
		// reconnect: the connection is down when ctx ends; our node can go
		// only once it is back.
		reconnect bool
	}{
		{name: "reply lost after apply",
			fault: func(env) queuetest.Fault { return queuetest.Fault{Hang: true} },
			until: func(e env) bool { return e.c.Blocked(queuetest.OpCreate) == 1 }},
		{name: "cancelled in flight, applied",
			fault: func(e env) queuetest.Fault { return queuetest.Fault{Before: e.cancel, Hang: true} }},
		{name: "cancelled in flight, not applied",
			fault: func(e env) queuetest.Fault { return queuetest.Fault{Before: e.cancel, Lost: true, Hang: true} }},
		{name: "connection closed after apply, refused", try: true,
			fault: func(env) queuetest.Fault { return queuetest.Fault{Err: client.ErrConnectionLoss} }},
		{name: "connection closed before apply, refused", try: true,
			fault: func(env) queuetest.Fault { return queuetest.Fault{Lost: true} }},
		{name: "connection closed after apply, cancelled waiting",
			fault: func(env) queuetest.Fault { return queuetest.Fault{Err: client.ErrConnectionLoss} },
			until: func(e env) bool {
				return e.c.Blocked(queuetest.OpWatch) == 1 || e.s.ChildWatching(semLeases) == 1
			}},
		{name: "connection closed after apply, cancelled reconnecting", reconnect: true,
			fault: func(e env) queuetest.Fault {
				return queuetest.Fault{Err: client.ErrConnectionLoss, After: e.c.EndEpoch}
			},
			until: func(e env) bool { return e.c.Blocked(queuetest.OpEpoch) == 1 }},
		{name: "session moved after apply, cancelled reconnecting", reconnect: true,
			fault: func(e env) queuetest.Fault { return queuetest.Fault{Err: client.ErrSessionMoved, After: e.c.EndEpoch} },
			until: func(e env) bool { return e.c.Blocked(queuetest.OpEpoch) == 1 }},
	} {
		for _, prim := range []struct {
			name    string
			acquire func(ctx context.Context, s *queuetest.Server, c *queuetest.Conn, try bool) error
			refused error
		}{
			{"mutex", acquireMutex, errs.ErrLocked},
			{"leases", acquireLease, errs.ErrNotAcquired},
		} {
			t.Run(tc.name+"/"+prim.name, func(t *testing.T) {
				s := queuetest.NewServer()
				c := s.Connect()
				ctx, cancel := context.WithCancel(testCtx(t))
				defer cancel()
				e := env{s, c, cancel}
				c.Inject(queuetest.OpCreate, tc.fault(e))
				done := make(chan error, 1)
				go func() { done <- prim.acquire(ctx, s, c, tc.try) }()
				if tc.until != nil {
					await(t, s, "the stage is reached", func() bool { return tc.until(e) })
					cancel()
				}
				err := <-done
				consumed(t, c)
				want := context.Canceled
				if tc.try {
					want = prim.refused
				}
				if !errors.Is(err, want) {
					t.Fatalf("Acquire: %v, want %v", err, want)
				}
				if tc.reconnect {
					c.NewEpoch()
					await(t, s, "our node is gone once reconnected", func() bool {
						return len(s.Ephemerals(c.SessionID())) == 0
					})
				}
				noNodes(t, s, c.SessionID())
			})
		}
	}
}

// acquireMutex makes another session hold the mutex, then acquires it.
func acquireMutex(ctx context.Context, s *queuetest.Server, c *queuetest.Conn, try bool) error {
	if _, err := mutexQ(s.Connect()).Acquire(ctx, queue.Request{}); err != nil {
		return err
	}
	_, err := mutexQ(c).Acquire(ctx, queue.Request{Try: try})
	return err
}

// acquireLease makes another session hold the only lease, then acquires
// one.
func acquireLease(ctx context.Context, s *queuetest.Server, c *queuetest.Conn, try bool) error {
	if _, err := leases(s.Connect(), 1).Acquire(ctx, queue.LeaseRequest{N: 1}); err != nil {
		return err
	}
	_, err := leases(c, 1).Acquire(ctx, queue.LeaseRequest{N: 1, Try: try})
	return err
}

// Cancellation at every stage of an acquisition leaves no node behind.
func TestLeaseCancel(t *testing.T) {
	hang := func(cancel func()) queuetest.Fault { return queuetest.Fault{Before: cancel, Hang: true} }
	for _, tc := range []struct {
		name   string
		n      int
		faults func(cancel func()) []queuetest.Fault // on creates
		ahead  bool                                  // another contender holds the mutex
		until  func(s *queuetest.Server, c *queuetest.Conn) bool
	}{
		{name: "fast path create", n: 1, faults: func(c func()) []queuetest.Fault { return []queuetest.Fault{hang(c)} }},
		{name: "fast path second create", n: 2, faults: func(c func()) []queuetest.Fault { return []queuetest.Fault{{}, hang(c)} }},
		{name: "slow path lease create", n: 1, faults: func(c func()) []queuetest.Fault { return []queuetest.Fault{{}, {}, hang(c)} }},
		{name: "waiting for the mutex", n: 1, ahead: true,
			until: func(_ *queuetest.Server, c *queuetest.Conn) bool { return c.Blocked(queuetest.OpWatch) == 1 }},
		{name: "waiting for leases", n: 1,
			until: func(s *queuetest.Server, _ *queuetest.Conn) bool { return s.ChildWatching(semLeases) == 1 }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := queuetest.NewServer()
			rival, c := s.Connect(), s.Connect()
			lease(t, rival, 1, queue.LeaseRequest{N: 1})
			if err := rival.CreateContainer(t.Context(), semLocks); err != nil {
				t.Fatal(err) // so that the slow path's creates are the ones counted
			}
			if tc.ahead {
				goLeases(t, leases(s.Connect(), 1), queue.LeaseRequest{N: 1})
				await(t, s, "another holds the mutex", func() bool { return s.ChildWatching(semLeases) == 1 })
			}
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			if tc.faults != nil {
				for _, f := range tc.faults(cancel) {
					c.Inject(queuetest.OpCreate, f)
				}
			}
			done := make(chan error, 1)
			go func() { _, err := leases(c, 1).Acquire(ctx, queue.LeaseRequest{N: tc.n}); done <- err }()
			if tc.until != nil {
				await(t, s, "the acquisition waits", func() bool { return tc.until(s, c) })
				cancel()
			}
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("Acquire: %v, want context.Canceled", err)
			}
			consumed(t, c)
			if len(created(s, c.SessionID(), sem)) == 0 {
				t.Fatal("cancelled before any node was made: the stage was not reached")
			}
			noNodes(t, s, c.SessionID())
		})
	}
}
