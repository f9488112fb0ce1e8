package queue_test

import (
	"errors"
	"path"
	"slices"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// A Try that would wait fails with a LockedError naming the first
// contender (the holder, not the waiter ahead of us), and deletes our node.
func TestTryLocked(t *testing.T) {
	s, c := setup(t)
	holder, waiter := s.Connect(), s.Connect()
	hh := acquire(t, mutexQ(holder), queue.Request{Data: []byte("holder")})
	goAcquire(t, mutexQ(waiter), queue.Request{})
	await(t, s, "the waiter watches the holder", func() bool { return s.Watching(hh.Path) == 1 })

	_, err := mutexQ(c).Acquire(testCtx(t), queue.Request{Try: true})
	var le *errs.LockedError
	if !errors.As(err, &le) || !errors.Is(err, errs.ErrLocked) {
		t.Fatalf("Try: %v, want a LockedError", err)
	}
	if le.Holder != path.Base(hh.Path) || le.Session != holder.SessionID() || string(le.Data) != "holder" {
		t.Fatalf("LockedError %+v, want holder %s of session %d", le, hh.Path, holder.SessionID())
	}
	if len(created(s, c.SessionID(), dir)) != 1 || len(watchesBy(s, c.SessionID())) != 0 {
		t.Fatal("Try did not create exactly one node, or it waited")
	}
	noNodes(t, s, c.SessionID())
}

// Waiters are granted in queue order, each watching only the node directly
// ahead of it: a release wakes exactly one waiter (no herd).
func TestMutexFIFOHerdFree(t *testing.T) {
	s, _ := setup(t)
	conns := []*queuetest.Conn{s.Connect(), s.Connect(), s.Connect(), s.Connect()}
	held := acquire(t, mutexQ(conns[0]), queue.Request{})
	if held.Waited {
		t.Fatal("an uncontended grant reports Waited")
	}
	nodes := []string{held.Path}
	var waiting []<-chan result
	for _, c := range conns[1:] {
		waiting = append(waiting, goAcquire(t, mutexQ(c), queue.Request{}))
		pred := nodes[len(nodes)-1]
		await(t, s, "a waiter watches "+pred, func() bool { return s.Watching(pred) == 1 })
		nodes = append(nodes, newNode(t, s, dir, nodes...))
	}
	for i, c := range conns[1:] {
		if got := watchesBy(s, c.SessionID()); !slices.Equal(got, nodes[i:i+1]) {
			t.Fatalf("waiter %d watched %v, want only its predecessor %s", i+1, got, nodes[i])
		}
	}
	for i, ch := range waiting {
		for _, later := range waiting[i:] {
			blocked(t, later, "a later waiter")
		}
		if err := mutexQ(conns[i]).Release(testCtx(t), held); err != nil {
			t.Fatalf("Release: %v", err)
		}
		held = holds(t, ch)
		if held.Path != nodes[i+1] || !held.Waited {
			t.Fatalf("granted %s (waited %v), want %s", held.Path, held.Waited, nodes[i+1])
		}
		for j := i + 2; j < len(nodes); j++ { // not woken: still on its first watch
			if s.Watching(nodes[j-1]) != 1 || len(watchesBy(s, conns[j].SessionID())) != 1 {
				t.Fatalf("waiter %d was woken by the release of %s", j, nodes[i])
			}
		}
	}
}

// A data change on the node ahead (Curator writes one to request a
// revocation) is no release: the waiter looks again and keeps waiting.
func TestWaitDataChange(t *testing.T) {
	s, c := setup(t)
	holder := s.Connect()
	hh := acquire(t, mutexQ(holder), queue.Request{})
	ch := goAcquire(t, mutexQ(c), queue.Request{})
	await(t, s, "the waiter watches", func() bool { return s.Watching(hh.Path) == 1 })
	if err := s.SetData(hh.Path, []byte("revoke")); err != nil {
		t.Fatal(err)
	}
	await(t, s, "the waiter watches again", func() bool {
		return len(watchesBy(s, c.SessionID())) == 2 && s.Watching(hh.Path) == 1
	})
	blocked(t, ch, "the waiter")
	if err := mutexQ(holder).Release(testCtx(t), hh); err != nil {
		t.Fatal(err)
	}
	holds(t, ch)
}

// A watch that never fires (go-zookeeper failed to restore it after a
// reconnect) does not strand the waiter: the end of the epoch wakes it, and
// it looks again.
func TestWaitRechecksAfterEpochEnd(t *testing.T) {
	s, c := setup(t)
	holder := s.Connect()
	hh := acquire(t, mutexQ(holder), queue.Request{})
	c.Inject(queuetest.OpWatch, queuetest.Fault{Lost: true})
	ch := goAcquire(t, mutexQ(c), queue.Request{})
	await(t, s, "the waiter waits", func() bool { return c.Blocked(queuetest.OpWatch) == 1 })
	if err := mutexQ(holder).Release(testCtx(t), hh); err != nil {
		t.Fatal(err)
	}
	blocked(t, ch, "a waiter with a lost watch")
	c.EndEpoch()
	c.NewEpoch()
	if h := holds(t, ch); !slices.Equal(c.Tracked(), []string{h.Path}) {
		t.Fatalf("held %s, tracked %v", h.Path, c.Tracked())
	}
}

// When the session expires under a waiter (its node goes with it), the
// waiter enqueues again under the new session, even if the lock path was
// reaped meanwhile.
func TestReenqueueAfterExpiry(t *testing.T) {
	for _, tc := range []struct {
		name string
		reap bool
	}{{"path kept", false}, {"path reaped", true}} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := setup(t)
			holder := s.Connect()
			hh := acquire(t, mutexQ(holder), queue.Request{})
			ch := goAcquire(t, mutexQ(c), queue.Request{})
			await(t, s, "the waiter watches", func() bool { return s.Watching(hh.Path) == 1 })
			first, old := newNode(t, s, dir, hh.Path), c.SessionID()
			release := func() {
				if err := mutexQ(holder).Release(testCtx(t), hh); err != nil {
					t.Error(err)
				}
			}
			if tc.reap { // the holder leaves and the path is reaped before the waiter looks again
				c.Inject(queuetest.OpChildren, queuetest.Fault{Before: func() {
					release()
					if !s.Reap(dir) {
						t.Error("lock path not reaped")
					}
				}})
			}
			c.Expire()
			if !tc.reap {
				await(t, s, "the waiter waits again", func() bool {
					return len(created(s, c.SessionID(), dir)) == 1 && s.Watching(hh.Path) == 1
				})
				release()
			}
			h := holds(t, ch)
			consumed(t, c)
			if _, st, _ := s.Node(h.Path); h.Path == first || st.EphemeralOwner != c.SessionID() || c.SessionID() == old {
				t.Fatalf("held %s of session %d; first node %s, sessions %d then %d",
					h.Path, st.EphemeralOwner, first, old, c.SessionID())
			}
		})
	}
}

// Release deletes the node and untracks it; once the epoch has ended it
// returns ErrLost, the node going with the epoch (the session's cleanup).
func TestRelease(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  func(c *queuetest.Conn)
		fault   *queuetest.Fault // on the delete
		want    error
		deletes int
		kept    bool // the node remains, tracked
	}{
		{name: "deleted", deletes: 1},
		{name: "epoch already ended", before: func(c *queuetest.Conn) { c.EndEpoch(); c.NewEpoch() }, want: errs.ErrLockLost},
		// The delete cannot reach the server and the epoch ends meanwhile.
		{name: "epoch ends during the delete", want: errs.ErrLockLost, deletes: 1},
		{name: "delete refused", fault: &queuetest.Fault{Lost: true, Err: client.ErrNoAuth}, want: client.ErrNoAuth, deletes: 1, kept: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := setup(t)
			q := mutexQ(c)
			h := acquire(t, q, queue.Request{})
			if tc.before != nil {
				tc.before(c)
			}
			if tc.fault != nil {
				c.Inject(queuetest.OpDelete, *tc.fault)
			} else if tc.want != nil && tc.deletes == 1 {
				c.Inject(queuetest.OpDelete, queuetest.Fault{Before: c.EndEpoch, Lost: true, Hang: true})
			}
			ctx := testCtx(t)
			err := q.Release(ctx, h)
			consumed(t, c)
			if !errors.Is(err, tc.want) || ctx.Err() != nil {
				t.Fatalf("Release: %v (ctx: %v), want %v", err, ctx.Err(), tc.want)
			}
			if got := s.Calls(queuetest.OpDelete); got != tc.deletes {
				t.Fatalf("%d deletes sent, want %d", got, tc.deletes)
			}
			if s.Exists(h.Path) != tc.kept || slices.Contains(c.Tracked(), h.Path) != tc.kept {
				t.Fatalf("node exists %v, tracked %v; want both %v", s.Exists(h.Path), c.Tracked(), tc.kept)
			}
		})
	}
}
