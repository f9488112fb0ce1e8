package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// The sequence layout (WithSequenceLayout) on a real server. Its
// contracts (cancel, herd-free with 32 waiters, loss before rival, expiry,
// a SIGKILLed holder, tokens, a create reply lost) are TestContracts'
// "Mutex sequence layout" rows; its refusal of every other kind, in both
// directions, is TestWrongKindRefused's. These tests are what only this
// layout has: the walk down the sequence numbers, its gaps, and the
// queue's order through a walk.

// seqQueueLen is the queue the tests build: longer than a listed queue
// (SeqListBelow, 16), so that every waiter walks.
const seqQueueLen = 20

func seqMutex(t *testing.T, s *zklock.Session, path string) *zklock.Mutex {
	t.Helper()
	m, err := zklock.NewMutex(s, path, zklock.WithSequenceLayout())
	require.NoError(t, err)
	return m
}

// seqNodes returns path's sequence-layout nodes in queue order.
func seqNodes(t *testing.T, s *zklock.Session, path string) []string {
	t.Helper()
	var out []string
	for _, n := range nodeNames(t, s, path) {
		if strings.Contains(n, "-seqlock-") {
			out = append(out, path+"/"+n)
		}
	}
	slices.Sort(out) // ten digits: the sequence order while nothing wrapped
	return out
}

// awaitWatchOn waits until session sid has a watch on node: its waiter
// has found the node ahead and waits for it.
func awaitWatchOn(t *testing.T, c server, sid int64, node string) {
	t.Helper()
	eventually(t, 20*time.Second, fmt.Sprintf("session %#x watches %s", sid, node), func() bool {
		ws, err := c.Watches(t.Context())
		return err == nil && slices.Contains(ws[sid], node)
	})
}

// seqQueue is a holder and waiters enqueued one after the other, so that
// their enqueue order is known: each waiter's Lock is started once the
// one before it has its node.
type seqQueue struct {
	mu      sync.Mutex
	order   []int // waiters in the order they held
	holding atomic.Int32
	overlap atomic.Bool
	done    []<-chan result
	cancel  []context.CancelFunc
}

// heldInOrder waits for every waiter (each within timeout) and requires
// that they held one at a time, in the order they enqueued.
func (q *seqQueue) heldInOrder(t *testing.T, timeout time.Duration) {
	t.Helper()
	for i, ch := range q.done {
		require.NoError(t, await(t, ch, timeout, fmt.Sprintf("waiter %d", i)).err)
	}
	require.False(t, q.overlap.Load(), "two waiters held at once")
	want := make([]int, len(q.done))
	for i := range want {
		want[i] = i
	}
	require.Equal(t, want, q.order, "the order they held in")
}

// enqueue starts waiter i's Lock on m; it records when it holds, then
// unlocks. It returns once the waiter's node is the want-th in path.
func (q *seqQueue) enqueue(t *testing.T, ctx context.Context, obs *zklock.Session, path string, i int, m *zklock.Mutex, want int) {
	t.Helper()
	wctx, cancel := context.WithCancel(ctx)
	q.cancel = append(q.cancel, cancel)
	q.done = append(q.done, async(func() error {
		if err := m.Lock(wctx); err != nil {
			return err
		}
		if q.holding.Add(1) != 1 {
			q.overlap.Store(true)
		}
		q.mu.Lock()
		q.order = append(q.order, i)
		q.mu.Unlock()
		q.holding.Add(-1)
		return m.Unlock(ctx)
	}))
	eventually(t, 10*time.Second, fmt.Sprintf("waiter %d enqueued", i), func() bool {
		return len(seqNodes(t, obs, path)) >= want
	})
}

// TestSeqLayoutHandoffInOrder: a queue longer than a listed one is handed
// on in the order it was enqueued, one holder at a time.
func TestSeqLayoutHandoffInOrder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 4)
	path := lockPath(t, "lock")
	holder := seqMutex(t, ss[0], path)
	require.NoError(t, holder.Lock(ctx))
	var q seqQueue
	for i := range seqQueueLen {
		q.enqueue(t, ctx, ss[0], path, i, seqMutex(t, ss[i%len(ss)], path), i+2)
	}
	nodes := seqNodes(t, ss[0], path)
	awaitWatchOn(t, c, ss[(seqQueueLen-1)%len(ss)].Client().SessionID(), nodes[len(nodes)-2])
	require.NoError(t, holder.Unlock(ctx))
	q.heldInOrder(t, 20*time.Second)
	require.Empty(t, seqNodes(t, ss[0], path))
}

// TestSeqLayoutWaiterLeavesMiddle: a waiter in the middle of the queue
// cancels, and another's session expires (a crashed client); the waiters
// behind each walk on past its number, and the queue keeps its order. The
// expired one re-enqueues under its new session, last.
func TestSeqLayoutWaiterLeavesMiddle(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 3)
	px := zktest.NewProxy(t, c.Servers())
	crashed := newSession(t, px.Addrs())
	path := lockPath(t, "lock")
	holder := seqMutex(t, ss[0], path)
	require.NoError(t, holder.Lock(ctx))
	const cancelled, expired = 7, 12
	var q seqQueue
	for i := range seqQueueLen {
		s := ss[i%len(ss)]
		if i == expired {
			s = crashed
		}
		q.enqueue(t, ctx, ss[0], path, i, seqMutex(t, s, path), i+2)
	}
	nodes := seqNodes(t, ss[0], path) // the holder's, then the waiters'
	awaitWatchOn(t, c, ss[(cancelled+1)%len(ss)].Client().SessionID(), nodes[cancelled+1])
	awaitWatchOn(t, c, ss[(expired+1)%len(ss)].Client().SessionID(), nodes[expired+1])

	q.cancel[cancelled]()
	require.ErrorIs(t, await(t, q.done[cancelled], 10*time.Second, "the cancelled waiter").err, context.Canceled)
	oldSID := crashed.Client().SessionID()
	require.NoError(t, c.ExpireSession(ctx, px, oldSID))
	eventually(t, 10*time.Second, "the expired waiter enqueued again", func() bool {
		got := seqNodes(t, ss[0], path)
		return !slices.Contains(got, nodes[expired+1]) && !slices.Contains(got, nodes[cancelled+1]) &&
			len(got) == seqQueueLen // the holder, 19 waiters less the cancelled one, the new node
	})

	require.NoError(t, holder.Unlock(ctx))
	for i, ch := range q.done {
		if i != cancelled {
			require.NoError(t, await(t, ch, 30*time.Second, fmt.Sprintf("waiter %d", i)).err)
		}
	}
	require.False(t, q.overlap.Load(), "two waiters held at once")
	var want []int
	for i := range seqQueueLen {
		if i != cancelled && i != expired {
			want = append(want, i)
		}
	}
	require.Equal(t, append(want, expired), q.order, "the order they held in")
	require.NotEqual(t, oldSID, crashed.Client().SessionID())
}

// TestSeqLayoutGaps: the numbers below a waiter's are not all nodes of
// the queue (a create of another child takes a number too; a delete does
// not, which the test checks). With the node ahead a few numbers down the
// walk finds it; with it further down than the walk looks, the waiter
// lists the queue. Either way it waits for the holder and holds once it
// has gone. The path holds 17 children of no kind, so that the queue is
// walked, not listed: they count among the children.
func TestSeqLayoutGaps(t *testing.T) {
	t.Parallel()
	c := shared(t)
	for _, tc := range []struct {
		name  string
		pairs int // creates and deletes between the holder's create and the waiter's
	}{
		{"next below", 0},
		{"within the walk", 5},
		{"past the walk", 20},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxFor(t)
			ss := manySessions(t, c.Servers(), 2)
			path := lockPath(t, "lock")
			cl := ss[0].Client()
			mkdirs(t, cl, path)
			for i := range 17 {
				_, err := cl.Create(ctx, fmt.Sprintf("%s/filler-%d", path, i), nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
				require.NoError(t, err)
			}
			holder := seqMutex(t, ss[0], path)
			require.NoError(t, holder.Lock(ctx))
			for range tc.pairs {
				_, err := cl.Create(ctx, path+"/junk", nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
				require.NoError(t, err)
				require.NoError(t, cl.Delete(ctx, path+"/junk", -1))
			}
			w := seqMutex(t, ss[1], path)
			res := async(func() error { return w.Lock(ctx) })
			awaitWatchOn(t, c, ss[1].Client().SessionID(), zklock.NodeOf(holder))
			select {
			case r := <-res:
				t.Fatalf("the waiter returned (%v) while the holder held", r.err)
			default:
			}
			nodes := seqNodes(t, ss[0], path)
			require.Len(t, nodes, 2)
			gap := seqNumber(t, nodes[1]) - seqNumber(t, nodes[0])
			require.Equal(t, tc.pairs+1, gap, "the numbers between the holder's and the waiter's: a create takes one, a delete none")
			tok := holder.Token()
			require.NoError(t, holder.Unlock(ctx))
			require.NoError(t, await(t, res, 10*time.Second, "the waiter").err)
			require.Greater(t, w.Token(), tok)
			require.NoError(t, w.Unlock(ctx))
		})
	}
}

// seqNumber returns a sequence-layout node's number.
func seqNumber(t *testing.T, node string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscanf(node[strings.LastIndex(node, "-")+1:], "%d", &n)
	require.NoError(t, err)
	return n
}

// mkdirs creates p and its parents as persistent nodes.
func mkdirs(t *testing.T, cl *zk.Client, p string) {
	t.Helper()
	for i := 1; i <= len(p); i++ {
		if i < len(p) && p[i] != '/' {
			continue
		}
		_, err := cl.Create(t.Context(), p[:i], nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
		if !errors.Is(err, zk.ErrNodeExists) {
			require.NoError(t, err)
		}
	}
}

// TestSeqLayoutRefusesWalkedPath: on a path long enough to be walked, the
// walk finds no sequence-layout node, lists, and refuses the default
// layout's holder; and a default-layout contender refuses the sequence
// layout's holder. Neither leaves a node.
func TestSeqLayoutRefusesWalkedPath(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 2)
	path := lockPath(t, "lock")
	cl := ss[0].Client()
	mkdirs(t, cl, path)
	for i := range 17 {
		_, err := cl.Create(ctx, fmt.Sprintf("%s/filler-%d", path, i), nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
		require.NoError(t, err)
	}
	for _, tc := range []struct {
		holder, contender []zklock.Option
		found             zklock.Kind
	}{
		{nil, []zklock.Option{zklock.WithSequenceLayout()}, zklock.KindMutex},
		{[]zklock.Option{zklock.WithSequenceLayout()}, nil, zklock.KindMutexSeq},
	} {
		h, err := zklock.NewMutex(ss[0], path, tc.holder...)
		require.NoError(t, err)
		require.NoError(t, h.Lock(ctx))
		k, err := zklock.NewMutex(ss[1], path, tc.contender...)
		require.NoError(t, err)
		kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		err = k.Lock(kctx)
		cancel()
		var wk *zklock.WrongKindError
		require.ErrorAs(t, err, &wk)
		require.Equal(t, tc.found, wk.Found)
		require.Equal(t, []string{zklock.NodeOf(h)}, ephemeralsUnder(t, cl, path), "only the holder's node remains")
		require.NoError(t, h.Unlock(ctx))
	}
}

// TestSeqLayoutWatchAndBreak: an operator's view of a sequence-layout
// path: WatchLock tells its kind, holder and waiter; Break deletes the
// holder's node, and the waiter, told of a deletion it cannot take for a
// release, looks again and holds.
func TestSeqLayoutWatchAndBreak(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 3)
	path := lockPath(t, "lock")
	h := seqMutex(t, ss[0], path)
	require.NoError(t, h.Lock(ctx))
	w := seqMutex(t, ss[1], path)
	res := async(func() error { return w.Lock(ctx) })
	awaitWatchOn(t, c, ss[1].Client().SessionID(), zklock.NodeOf(h))

	wctx, stop := context.WithCancel(ctx)
	defer stop()
	states, err := zklock.WatchLock(wctx, ss[2], path)
	require.NoError(t, err)
	st := <-states
	require.Equal(t, zklock.KindMutexSeq, st.Kind)
	require.Len(t, st.Holders, 1)
	require.Equal(t, zklock.NodeOf(h), st.Holders[0].Path)
	require.Len(t, st.Waiting, 1)

	broken, err := zklock.Break(ctx, ss[2], path, true)
	require.NoError(t, err)
	require.Len(t, broken, 1)
	require.Equal(t, zklock.NodeOf(h), broken[0].Path)
	require.NoError(t, await(t, res, 10*time.Second, "the waiter after the break").err)
	require.Greater(t, w.Token(), h.Token())
	require.NoError(t, w.Unlock(ctx))
}

// TestSeqLayoutHolderExpires: the holder of a walked queue crashes (its
// session expires): it is told (Lost), the waiter behind it sees a plain
// deletion, walks below it, finds nothing, lists and holds, and the queue
// goes on in order.
func TestSeqLayoutHolderExpires(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	ss := manySessions(t, c.Servers(), 3)
	px := zktest.NewProxy(t, c.Servers())
	hs := newSession(t, px.Addrs())
	path := lockPath(t, "lock")
	holder := seqMutex(t, hs, path)
	require.NoError(t, holder.Lock(ctx))
	var q seqQueue
	for i := range seqQueueLen {
		q.enqueue(t, ctx, ss[0], path, i, seqMutex(t, ss[i%len(ss)], path), i+2)
	}
	awaitWatchOn(t, c, ss[0].Client().SessionID(), zklock.NodeOf(holder))
	require.NoError(t, c.ExpireSession(ctx, px, hs.Client().SessionID()))
	select {
	case <-holder.Lost():
	case <-time.After(10 * time.Second):
		t.Fatal("the expired holder was not told")
	}
	q.heldInOrder(t, 30*time.Second)
	require.ErrorIs(t, holder.Unlock(ctx), zklock.ErrLockLost)
}

// A sequence-layout Mutex is a MultiLock part like any other: the
// MultiLock holds it beside a Mutex of the default layout, its guard
// (with the part's nil guard) is refused by Multi, and nothing is
// left behind; a rival of the same layout waits for the MultiLock.
func TestSeqLayoutInMultiLock(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "multi")
	s, rs := newSession(t, c.Servers()), newSession(t, c.Servers())
	def, err := zklock.NewMutex(s, root+"/a")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(def, seqMutex(t, s, root+"/b"))
	require.NoError(t, err)
	require.NoError(t, ml.Lock(ctx))
	rival := async(func() error { return seqMutex(t, rs, root+"/b").Lock(ctx) })
	eventually(t, 10*time.Second, "the rival queued", func() bool { return len(seqNodes(t, s, root+"/b")) == 2 })
	select {
	case r := <-rival:
		t.Fatalf("the rival returned (err %v) while the MultiLock holds", r.err)
	default:
	}
	write := func(guard []zk.Op) error {
		_, err := s.Client().Multi(ctx, append(guard, &zk.SetDataOp{Path: root, Data: []byte("x"), Version: -1})...)
		return err
	}
	// A sequence-layout part has no guard (a node of the path's earlier life may have its name), so the
	// MultiLock's guard is refused whole, held or not.
	guard := ml.Guard()
	require.Len(t, guard, 2)
	require.ErrorIs(t, write(guard), zklock.ErrInvalidArgument, "a guard with a sequence-layout part")
	require.NoError(t, ml.Unlock(ctx))
	require.ErrorIs(t, write(guard), zklock.ErrInvalidArgument, "a guard used after Unlock")
	require.NoError(t, await(t, rival, 10*time.Second, "the rival after the MultiLock's Unlock").err)
	requireNoEphemerals(t, c, s.Client().SessionID(), root, false)
}
