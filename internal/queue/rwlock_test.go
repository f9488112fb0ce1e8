package queue_test

import (
	"context"
	"errors"
	"path"
	"slices"
	"strings"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// A reader waits only for the nearest writer ahead of it, so readers
// between writers hold together; a writer waits for the node directly
// ahead of it, reader or writer.
func TestRWRules(t *testing.T) {
	s, _ := setup(t)
	kinds := []string{queue.KindWrite, queue.KindRead, queue.KindRead, queue.KindWrite, queue.KindRead}
	conns := make([]*queuetest.Conn, len(kinds))
	for i := range conns {
		conns[i] = s.Connect()
	}
	req := func(i int) queue.Request {
		if kinds[i] == queue.KindRead {
			return queue.Request{Blocks: reader}
		}
		return queue.Request{}
	}
	first := acquire(t, rwQ(conns[0], kinds[0]), req(0))
	nodes := []string{first.Path}
	watched := []int{-1, 0, 0, 2, 3} // whom each contender waits for
	chs := []<-chan result{nil}
	for i := 1; i < len(kinds); i++ {
		chs = append(chs, goAcquire(t, rwQ(conns[i], kinds[i]), req(i)))
		pred, n := nodes[watched[i]], 0 // n: contenders so far waiting for pred
		for _, w := range watched[1 : i+1] {
			if w == watched[i] {
				n++
			}
		}
		await(t, s, "contender "+kinds[i]+" watches "+pred, func() bool { return s.Watching(pred) == n })
		nodes = append(nodes, newNode(t, s, dir, nodes...))
	}
	for i := 1; i < len(kinds); i++ {
		if got := watchesBy(s, conns[i].SessionID()); !slices.Equal(got, []string{nodes[watched[i]]}) {
			t.Fatalf("contender %d (%s) watched %v, want %s", i, kinds[i], got, nodes[watched[i]])
		}
	}
	release := func(i int, h *queue.Held) {
		if err := rwQ(conns[i], kinds[i]).Release(testCtx(t), h); err != nil {
			t.Fatal(err)
		}
	}
	release(0, first)
	r1, r2 := holds(t, chs[1]), holds(t, chs[2]) // both readers at once
	blocked(t, chs[3], "the writer behind the readers")
	release(1, r1) // the writer waits for the other reader, not for this one
	if s.Watching(nodes[2]) != 1 || len(watchesBy(s, conns[3].SessionID())) != 1 {
		t.Fatal("the writer was woken by a reader it does not wait for")
	}
	blocked(t, chs[3], "the writer behind a reader")
	release(2, r2)
	w := holds(t, chs[3])
	blocked(t, chs[4], "the reader behind a writer")
	release(3, w)
	holds(t, chs[4])
}

// Join places a read node beside the write node we hold (a downgrade): it
// holds at once, sorts right after the writer, and a writer queued later
// waits for it.
func TestJoin(t *testing.T) {
	s, c := setup(t)
	w := acquire(t, rwQ(c, queue.KindWrite), queue.Request{})
	r, err := rwQ(c, queue.KindRead).Join(testCtx(t), w, []byte("r"))
	if err != nil {
		t.Fatalf("Join: %v", err)
	}
	if r.Node().Kind != queue.KindRead || r.Node().Seq != w.Node().Seq || r.Token != czxid(t, s, r.Path) ||
		r.Token <= w.Token || r.Epoch.Done != w.Epoch.Done || !slices.Contains(c.Tracked(), r.Path) {
		t.Fatalf("joined %+v beside %+v; tracked %v", r, w, c.Tracked())
	}
	if data, st, _ := s.Node(r.Path); string(data) != "r" || st.EphemeralOwner != c.SessionID() || st.NumChildren != 0 {
		t.Fatalf("read node data %q, owner %d", data, st.EphemeralOwner)
	}
	later := s.Connect()
	ch := goAcquire(t, rwQ(later, queue.KindWrite), queue.Request{})
	await(t, s, "the later writer watches the read node", func() bool { return s.Watching(r.Path) == 1 })
	if err := rwQ(c, queue.KindWrite).Release(testCtx(t), w); err != nil {
		t.Fatal(err)
	}
	blocked(t, ch, "a writer behind the downgraded reader")
	if err := rwQ(c, queue.KindRead).Release(testCtx(t), r); err != nil {
		t.Fatal(err)
	}
	holds(t, ch)
}

// Join recovers a create cut off by connection loss by its exact name, and
// on every failure leaves no read node.
func TestJoinFaults(t *testing.T) {
	for _, tc := range []struct {
		name    string
		before  func(c *queuetest.Conn)
		fault   func(c *queuetest.Conn, cancel func()) queuetest.Fault
		want    error // nil: joined
		creates int
	}{
		{name: "cut off, applied", creates: 1,
			fault: func(*queuetest.Conn, func()) queuetest.Fault { return queuetest.Fault{Err: client.ErrConnectionLoss} }},
		{name: "cut off, not applied", creates: 2,
			fault: func(*queuetest.Conn, func()) queuetest.Fault { return queuetest.Fault{Lost: true} }},
		{name: "epoch ended", want: errs.ErrLockLost,
			before: func(c *queuetest.Conn) { c.EndEpoch(); c.NewEpoch() }},
		{name: "epoch ends during the create", want: errs.ErrLockLost, creates: 1,
			fault: func(c *queuetest.Conn, _ func()) queuetest.Fault {
				return queuetest.Fault{After: func() { c.EndEpoch(); c.NewEpoch() }}
			}},
		{name: "cancelled in flight", want: context.Canceled, creates: 1,
			fault: func(_ *queuetest.Conn, cancel func()) queuetest.Fault {
				return queuetest.Fault{Before: cancel, Hang: true}
			}},
		{name: "refused", want: client.ErrNoAuth, creates: 1,
			fault: func(*queuetest.Conn, func()) queuetest.Fault {
				return queuetest.Fault{Lost: true, Err: client.ErrNoAuth}
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, c := setup(t)
			w := acquire(t, rwQ(c, queue.KindWrite), queue.Request{})
			ctx, cancel := context.WithCancel(testCtx(t))
			defer cancel()
			if tc.before != nil {
				tc.before(c)
			}
			if tc.fault != nil {
				c.Inject(queuetest.OpCreate, tc.fault(c, cancel))
			}
			before := s.Calls(queuetest.OpCreate)
			r, err := rwQ(c, queue.KindRead).Join(ctx, w, nil)
			consumed(t, c)
			if !errors.Is(err, tc.want) {
				t.Fatalf("Join: %v, want %v", err, tc.want)
			}
			if got := s.Calls(queuetest.OpCreate) - before; got != tc.creates {
				t.Fatalf("%d creates sent, want %d", got, tc.creates)
			}
			readers := slices.DeleteFunc(s.List(dir), func(n string) bool { return !strings.Contains(n, queue.KindRead) })
			if tc.want == nil {
				if len(readers) != 1 || path.Base(r.Path) != readers[0] || r.Token != czxid(t, s, r.Path) {
					t.Fatalf("joined %+v; read nodes %v", r, readers)
				}
			} else if len(readers) != 0 {
				t.Fatalf("a failed Join left %v", readers)
			}
		})
	}
}

// List returns the contenders in order with their data, ignoring other
// children and leaving out a node gone between the listing and its read;
// a missing path is an empty queue.
func TestList(t *testing.T) {
	s, c := setup(t)
	ctx := testCtx(t)
	if got, err := (&queue.Queue{Conn: c, Dir: "/none", Rules: &queue.Rules{Accept: []string{queue.KindLock}}}).List(ctx); got != nil || err != nil {
		t.Fatalf("List of a missing path: %v, %v", got, err)
	}
	var want []string
	for _, name := range []string{"lock-", "lock-", "junk", "lock-", "__rlock__"} {
		p, _, _, err := c.CreateSeq(ctx, dir+"/"+queue.NewProtectedPrefix()+name, []byte(name))
		if err != nil {
			t.Fatal(err)
		}
		if name == "lock-" {
			want = append(want, path.Base(p))
		}
	}
	c.Inject(queuetest.OpGet, queuetest.Fault{Path: dir + "/" + want[1], Before: func() {
		if err := c.Delete(ctx, dir+"/"+want[1]); err != nil {
			t.Error(err)
		}
	}})
	es, err := mutexQ(c).List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	consumed(t, c)
	var got []string
	for _, e := range es {
		got = append(got, e.Name)
		if string(e.Data) != "lock-" || e.Stat.Czxid != czxid(t, s, dir+"/"+e.Name) {
			t.Fatalf("entry %+v", e)
		}
	}
	if want = slices.Delete(want, 1, 2); !slices.Equal(got, want) {
		t.Fatalf("List: %v, want %v", got, want)
	}
}

// Join relies on the write node it joins: one deleted by another client
// (Break) is no place to put a read node, since a writer queued behind it
// may hold already. Join fails with ErrLost and leaves no read node.
func TestJoinBesideDeletedNode(t *testing.T) {
	s, c := setup(t)
	ctx := testCtx(t)
	w := acquire(t, rwQ(c, queue.KindWrite), queue.Request{})
	later := s.Connect()
	ch := goAcquire(t, rwQ(later, queue.KindWrite), queue.Request{})
	await(t, s, "the later writer watches our write node", func() bool { return s.Watching(w.Path) == 1 })
	if err := s.Connect().Delete(ctx, w.Path); err != nil { // an operator's Break
		t.Fatal(err)
	}
	b := holds(t, ch)
	r, err := rwQ(c, queue.KindRead).Join(ctx, w, nil)
	readers := slices.DeleteFunc(s.List(dir), func(n string) bool { return !strings.Contains(n, queue.KindRead) })
	if err == nil || len(readers) > 0 {
		t.Fatalf("Join beside a deleted write node: %+v, %v; read nodes %v while writer %s holds", r, err, readers, b.Path)
	}
	if !errors.Is(err, errs.ErrLockLost) {
		t.Fatalf("Join beside a deleted write node: %v, want ErrLost", err)
	}
}
