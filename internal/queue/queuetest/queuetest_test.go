package queuetest

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/queue"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	t.Cleanup(cancel)
	return ctx
}

func must(t *testing.T, err error) {
	t.Helper()
	if err != nil {
		t.Fatal(err)
	}
}

// Sequence numbers come from the parent's cversion (so deletes leave
// gaps), czxids from one zxid counter, owners from the session.
func TestCreateSeq(t *testing.T) {
	ctx := testCtx(t)
	s := NewServer()
	c := s.Connect()
	must(t, c.CreateContainer(ctx, "/q"))
	must(t, c.CreateContainer(ctx, "/q")) // an existing container is fine
	a, za, oa, err := c.CreateSeq(ctx, "/q/x-", nil)
	must(t, err)
	must(t, c.Delete(ctx, a))
	must(t, c.Delete(ctx, a)) // a missing node counts as deleted
	b, zb, ob, names, _, err := c.CreateAndList(ctx, nil, "/q/x-", []byte("d"))
	must(t, err)
	if a != "/q/x-0000000000" || b != "/q/x-0000000002" || zb <= za || oa != c.SessionID() || ob != oa {
		t.Fatalf("got %s %d %d, %s %d %d", a, za, oa, b, zb, ob)
	}
	if !slices.Equal(names, []string{"x-0000000002"}) {
		t.Fatalf("listing %v", names)
	}
	if _, _, _, err := c.CreateSeq(ctx, "/none/x-", nil); !errors.Is(err, client.ErrNoNode) {
		t.Fatalf("create under a missing parent: %v", err)
	}
	if st, err := c.Stat(ctx, "/q/none"); st != nil || err != nil {
		t.Fatalf("Stat of a missing node: %v %v", st, err)
	}
}

// Expiry deletes the session's ephemerals (only), ends its epoch and its
// child watches; the Conn continues under a new session.
func TestExpire(t *testing.T) {
	ctx := testCtx(t)
	s := NewServer()
	c, other := s.Connect(), s.Connect()
	must(t, c.CreateContainer(ctx, "/q"))
	mine, _, _, err := c.CreateSeq(ctx, "/q/x-", nil)
	must(t, err)
	theirs, _, _, err := other.CreateSeq(ctx, "/q/x-", nil)
	must(t, err)
	ep, err := c.Epoch(ctx)
	must(t, err)
	_, _, ch, err := c.ChildrenW(ctx, "/q")
	must(t, err)
	old := c.SessionID()
	c.Expire()
	if ev := <-ch; ev.Type != client.EventNotWatching {
		t.Fatalf("child watch: %v", ev) // the epoch's end fires it first, as the real Conn's state change does
	}
	<-ep.Done
	if s.Exists(mine) || !s.Exists(theirs) || c.SessionID() == old {
		t.Fatalf("after expiry: tree %v, session %d", s.List("/q"), c.SessionID())
	}
	if c.Track(ep, &queue.Tracked{Path: theirs}) {
		t.Fatal("Track on an ended epoch")
	}
}

// WaitChange: Deleted at once on a missing node, Deleted on deletion,
// LookAgain when the epoch ends, Released on a data change and on an
// announced release (ReleaseUntil) of a node whose data announces, else
// LookAgain; ctx.Err() on cancellation.
func TestWaitChange(t *testing.T) {
	ctx := testCtx(t)
	s := NewServer()
	c := s.Connect()
	must(t, c.CreateContainer(ctx, "/q"))
	if ch, err := c.WaitChange(ctx, "/q/none"); err != nil || ch != queue.Deleted {
		t.Fatalf("WaitChange on a missing node: %v, %v", ch, err)
	}
	announcing := []byte("d" + queue.Announcer)
	for _, tc := range []struct {
		data []byte
		end  func(p string)
		want queue.Change
	}{
		{nil, func(p string) { must(t, c.Delete(ctx, p)) }, queue.Deleted},
		{nil, func(string) { c.EndEpoch(); c.NewEpoch() }, queue.LookAgain},
		{announcing, func(p string) { must(t, s.SetData(p, []byte("x"))) }, queue.Released},
		{announcing, func(p string) { must(t, c.ReleaseUntil(ctx, p, queue.Epoch{})) }, queue.Released},
		// A node that does not announce: a data change proves nothing.
		{nil, func(p string) { must(t, s.SetData(p, []byte("x"))) }, queue.LookAgain},
		{[]byte("d"), func(p string) { must(t, c.ReleaseUntil(ctx, p, queue.Epoch{})) }, queue.LookAgain},
	} {
		p, _, _, err := c.CreateSeq(ctx, "/q/x-", tc.data)
		must(t, err)
		type res struct {
			ch  queue.Change
			err error
		}
		done := make(chan res, 1)
		go func() { ch, err := c.WaitChange(ctx, p); done <- res{ch, err} }()
		must(t, s.Await(ctx, func() bool { return s.Watching(p) == 1 }))
		tc.end(p)
		r := <-done
		must(t, r.err)
		if r.ch != tc.want {
			t.Fatalf("WaitChange: %v, want %v", r.ch, tc.want)
		}
		if s.Watching(p) != 0 {
			t.Fatal("watch left registered")
		}
	}
	cctx, cancel := context.WithCancel(ctx)
	c.Inject(OpWatch, Fault{Before: cancel})
	if _, err := c.WaitChange(cctx, "/q"); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled WaitChange: %v", err)
	}
}

// Faults: a lost create is not applied; an applied one with a replaced
// reply is; a hung CreateSeq removes its node when ctx ends.
func TestFaults(t *testing.T) {
	ctx := testCtx(t)
	s := NewServer()
	c := s.Connect()
	must(t, c.CreateContainer(ctx, "/q"))
	c.Inject(OpCreate, Fault{Lost: true})
	c.Inject(OpCreate, Fault{Err: client.ErrConnectionLoss})
	for range 2 {
		if _, _, _, err := c.CreateSeq(ctx, "/q/x-", nil); !errors.Is(err, client.ErrConnectionLoss) {
			t.Fatalf("CreateSeq: %v", err)
		}
	}
	if got := s.List("/q"); !slices.Equal(got, []string{"x-0000000000"}) {
		t.Fatalf("tree %v", got)
	}
	cctx, cancel := context.WithCancel(ctx)
	c.Inject(OpCreate, Fault{Before: cancel, Hang: true})
	if _, _, _, err := c.CreateSeq(cctx, "/q/y-", nil); !errors.Is(err, context.Canceled) {
		t.Fatalf("hung CreateSeq: %v", err)
	}
	if got := s.List("/q"); len(got) != 1 || c.Pending() != 0 {
		t.Fatalf("tree %v, %d faults unused", got, c.Pending())
	}
	if s.Reap("/q") {
		t.Fatal("Reap of a non-empty container")
	}
	must(t, c.Delete(ctx, "/q/"+s.List("/q")[0]))
	if !s.Reap("/q") || s.Exists("/q") {
		t.Fatal("an empty container was not reaped")
	}
}

// Observe sees each request with its caller's ctx and may change its
// fault: here the second request of one caller (told by a ctx value) runs
// another request inside its exchange, then hangs until the ctx ends.
func TestObserve(t *testing.T) {
	type key struct{}
	ctx := testCtx(t)
	s := NewServer()
	c := s.Connect()
	must(t, c.CreateContainer(ctx, "/q"))
	var seen []Op
	n := 0
	mine, cancel := context.WithCancel(context.WithValue(ctx, key{}, true))
	defer cancel()
	c.Observe(func(ctx context.Context, op Op, p string, f *Fault) {
		if ctx.Value(key{}) == nil {
			return
		}
		seen = append(seen, op)
		if n++; n == 2 {
			f.After = func() {
				must(t, c.Delete(ctx, "/q/a")) // inside this exchange
				cancel()
			}
			f.Hang = true
		}
	})
	if _, _, err := c.CreateEphemeral(mine, "/q/a", nil); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Stat(mine, "/q/a"); !errors.Is(err, context.Canceled) {
		t.Fatalf("the hung Stat: %v", err)
	}
	c.Observe(nil)
	if _, _, err := c.Get(mine, "/q"); !errors.Is(err, context.Canceled) {
		t.Fatalf("Get with the ended ctx: %v", err)
	}
	if !slices.Equal(seen, []Op{OpCreate, OpStat, OpDelete}) || s.Exists("/q/a") {
		t.Fatalf("observed %v; /q/a exists: %v", seen, s.Exists("/q/a"))
	}
}

// EndEpoch deletes the nodes tracked with the epoch; Epoch waits for the
// next one.
func TestEndEpoch(t *testing.T) {
	ctx := testCtx(t)
	s := NewServer()
	c := s.Connect()
	must(t, c.CreateContainer(ctx, "/q"))
	p, _, _, err := c.CreateSeq(ctx, "/q/x-", nil)
	must(t, err)
	ep, err := c.Epoch(ctx)
	must(t, err)
	if !c.Track(ep, &queue.Tracked{Path: p}) {
		t.Fatal("Track refused on a live epoch")
	}
	c.EndEpoch()
	if s.Exists(p) {
		t.Fatal("tracked node survived its epoch")
	}
	got := make(chan error, 1)
	go func() { _, err := c.Epoch(ctx); got <- err }()
	must(t, s.Await(ctx, func() bool { return c.Blocked(OpEpoch) == 1 }))
	c.NewEpoch()
	must(t, <-got)
}

// WaitData: a write made after the caller read the node, before it waits,
// returns LookAgain at once; at the version read, it waits like WaitChange.
func TestWaitData(t *testing.T) {
	ctx := testCtx(t)
	s := NewServer()
	c := s.Connect()
	must(t, c.CreateContainer(ctx, "/q"))
	p, _, _, err := c.CreateSeq(ctx, "/q/x-", nil)
	must(t, err)
	_, st, err := c.Get(ctx, p)
	must(t, err)
	must(t, s.SetData(p, []byte("written before the wait")))
	if ch, err := c.WaitData(ctx, p, st.Version); err != nil || ch != queue.LookAgain {
		t.Fatalf("WaitData after a write it had not read: %v, %v; want LookAgain at once", ch, err)
	}
	_, st, err = c.Get(ctx, p)
	must(t, err)
	done := make(chan queue.Change, 1)
	go func() { ch, _ := c.WaitData(ctx, p, st.Version); done <- ch }()
	must(t, s.Await(ctx, func() bool { return s.Watching(p) == 1 }))
	must(t, c.Delete(ctx, p))
	if ch := <-done; ch != queue.Deleted {
		t.Fatalf("WaitData at the version read, then a delete: %v, want Deleted", ch)
	}
	if ch, err := c.WaitData(ctx, p, st.Version); err != nil || ch != queue.Deleted {
		t.Fatalf("WaitData on a deleted node: %v, %v", ch, err)
	}
}
