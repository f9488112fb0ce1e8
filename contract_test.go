package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"os"
	"os/exec"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// The contracts every primitive keeps (TestContracts) are written once,
// against a party: one contender for a primitive on one session, speaking
// the same dialect whatever the primitive.
type party struct {
	acquire func(ctx context.Context) error
	release func(ctx context.Context) error
	lost    func() <-chan struct{}
	token   func() int64
	node    func() string // the node behind token
}

// primitive is one row of the contract table.
type primitive struct {
	// ours makes a party of the primitive under test.
	ours func(t *testing.T, s *zklock.Session, path string) *party
	// rival makes a party that excludes ours and that ours excludes: a
	// writer for RWMutex's read side, ours itself for every other.
	rival func(t *testing.T, s *zklock.Session, path string) *party
	// lostErr is what release returns once the loss signal fired.
	lostErr error
	// holderWatches is how many watches a holder keeps on the server: an
	// election's term watches its own node, to end when it is deleted.
	holderWatches int
	// grantsAll: a rival's release grants every waiting contender of ours
	// at once (readers behind a writer), not one.
	grantsAll bool
}

// primitives are the rows, by name (also the helper process's argument).
var primitives = map[string]primitive{
	"Mutex":           {ours: mutexParty, rival: mutexParty, lostErr: zklock.ErrLockLost},
	"ReentrantMutex":  {ours: reentrantParty, rival: reentrantParty, lostErr: zklock.ErrLockLost},
	"RWMutex read":    {ours: readParty, rival: writeParty, lostErr: zklock.ErrLockLost, grantsAll: true},
	"RWMutex write":   {ours: writeParty, rival: writeParty, lostErr: zklock.ErrLockLost},
	"Semaphore":       {ours: semParty, rival: semParty, lostErr: zklock.ErrLockLost},
	"Semaphore queue": {ours: semQueueParty, rival: semQueueParty, lostErr: zklock.ErrLockLost},
	"Election": {ours: electionParty, rival: electionParty, lostErr: zklock.ErrLockLost,
		holderWatches: 1},
	// Options over a primitive keep every contract (issue 34's pairs): a
	// bound that does not pass in the test, with revocation (the holder
	// watches its own node), and a cohort of one handle per session.
	"Mutex bounded revocable": {ours: boundedParty(mutexPartyWith), rival: boundedParty(mutexPartyWith),
		lostErr: zklock.ErrLockLost, holderWatches: 1},
	"RWMutex write bounded revocable": {ours: boundedParty(writePartyWith), rival: boundedParty(writePartyWith),
		lostErr: zklock.ErrLockLost, holderWatches: 1},
	"Mutex cohort": {ours: cohortParty, rival: cohortParty, lostErr: zklock.ErrLockLost},
	// zklock's sequence layout: herd-free with 32 waiters is its walk, and
	// a create reply lost its recovery by the token in the node's data.
	"Mutex sequence layout": {ours: seqParty, rival: seqParty, lostErr: zklock.ErrLockLost},
}

func mutexParty(t *testing.T, s *zklock.Session, path string) *party {
	return mutexPartyWith(t, s, path)
}

func mutexPartyWith(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) *party {
	m, err := zklock.NewMutex(s, path, opts...)
	require.NoError(t, err)
	return &party{m.Lock, m.Unlock, m.Lost, m.Token, func() string { return zklock.NodeOf(m) }}
}

// boundedParty makes parties of newParty with WithMaxHold (an hour: the
// bound never passes in a contract) and WithRevocable.
func boundedParty(newParty func(*testing.T, *zklock.Session, string, ...zklock.Option) *party) func(*testing.T, *zklock.Session, string) *party {
	return func(t *testing.T, s *zklock.Session, path string) *party {
		return newParty(t, s, path, zklock.WithMaxHold(time.Hour), zklock.WithRevocable(func() {}))
	}
}

func seqParty(t *testing.T, s *zklock.Session, path string) *party {
	return mutexPartyWith(t, s, path, zklock.WithSequenceLayout())
}

func cohortParty(t *testing.T, s *zklock.Session, path string) *party {
	return mutexPartyWith(t, s, path, zklock.WithCohort(0, 0))
}

func reentrantParty(t *testing.T, s *zklock.Session, path string) *party {
	m, err := zklock.NewReentrantMutex(s, path)
	require.NoError(t, err)
	return &party{m.Lock, m.Unlock, m.Lost, m.Token, func() string { return zklock.NodeOf(m) }}
}

func readParty(t *testing.T, s *zklock.Session, path string) *party {
	m, err := zklock.NewRWMutex(s, path)
	require.NoError(t, err)
	return &party{m.RLock, m.RUnlock, m.Lost, m.Token, func() string { return zklock.NodeOf(m) }}
}

func writeParty(t *testing.T, s *zklock.Session, path string) *party {
	return writePartyWith(t, s, path)
}

func writePartyWith(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) *party {
	m, err := zklock.NewRWMutex(s, path, opts...)
	require.NoError(t, err)
	return &party{m.Lock, m.Unlock, m.Lost, m.Token, func() string { return zklock.NodeOf(m) }}
}

// semParty takes one lease of a semaphore of one: exclusive, like a
// lock. Its accessors are called only once acquire has returned.
func semParty(t *testing.T, s *zklock.Session, path string) *party {
	return semPartyWith(t, s, path)
}

func semPartyWith(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) *party {
	sem, err := zklock.NewSemaphore(s, path, 1, opts...)
	require.NoError(t, err)
	var l *zklock.Lease
	return &party{
		acquire: func(ctx context.Context) (err error) { l, err = sem.Acquire(ctx, 1); return err },
		release: func(ctx context.Context) error { return l.Release(ctx) },
		lost:    func() <-chan struct{} { return l.Lost() },
		token:   func() int64 { return l.Token() },
		node:    func() string { return zklock.NodeOf(l) },
	}
}

// semQueueParty is semParty in the one-queue layout (WithPermitLayout).
func semQueueParty(t *testing.T, s *zklock.Session, path string) *party {
	return semPartyWith(t, s, path, zklock.WithPermitLayout())
}

// electionParty campaigns; release resigns. Its accessors are the
// term's, called only once acquire has returned.
func electionParty(t *testing.T, s *zklock.Session, path string) *party {
	e, err := zklock.NewElection(s, path)
	require.NoError(t, err)
	var term *zklock.Term
	return &party{
		acquire: func(ctx context.Context) (err error) { term, err = e.Campaign(ctx, nil); return err },
		release: e.Resign,
		lost:    func() <-chan struct{} { return term.Lost() },
		token:   func() int64 { return term.Token() },
		node:    func() string { return zklock.NodeOf(term) },
	}
}

// contracts are the cases of TestContracts, each run over every primitive.
var contracts = []struct {
	name string
	run  func(t *testing.T, name string, p primitive)
}{
	{"cancel leaves nothing", contractCancel},
	{"herd-free", contractHerd},
	{"loss before rival", contractLossBeforeRival},
	{"waiter re-enqueues after expiry", contractReenqueue},
	{"holder SIGKILLed", contractKilled},
	{"tokens across a re-created parent", contractTokens},
	{"create reply lost", contractReplyLost},
}

// TestContracts runs every contract over every primitive: a pair that
// counts watches or kills its server on a server of its own, the others
// on the shared one (see shared). The pairs run in parallel, with the
// package's other parallel tests, as many at once as -parallel allows
// (GOMAXPROCS by default): most of their time is spent waiting for a
// session to time out, and nothing they count is shared between servers.
func TestContracts(t *testing.T) {
	t.Parallel()
	for _, c := range contracts {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			for _, name := range slices.Sorted(maps.Keys(primitives)) {
				t.Run(name, func(t *testing.T) {
					t.Parallel()
					c.run(t, name, primitives[name])
				})
			}
		})
	}
}

// contractCancel: an acquisition cancelled while it waits, its node on the
// server, returns ctx's error once its node is gone, leaving nothing; the
// handle then acquires as usual. The waiter's requests are delayed through
// a proxy from the cancellation on, so that an acquisition that returned
// before the server had deleted its node would be seen to leave it.
func contractCancel(t *testing.T, _ string, p primitive) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	px := zktest.NewProxy(t, c.Servers())
	hs, ws := newSession(t, c.Servers()), newSession(t, px.Addrs())
	holder := p.rival(t, hs, path)
	require.NoError(t, holder.acquire(ctx))
	want := ephemeralsUnder(t, hs.Client(), path)
	w := p.ours(t, ws, path)
	wctx, cancel := context.WithCancel(ctx)
	defer cancel()
	res := async(func() error { return w.acquire(wctx) })
	awaitEphemeralOf(t, hs.Client(), path, ws.Client().SessionID())
	// 100ms each way: a delete takes 200ms, within the cleanup grace (1s).
	px.SetLatency(100 * time.Millisecond)
	cancel()
	require.ErrorIs(t, await(t, res, 10*time.Second, "the cancelled acquisition").err, context.Canceled)
	require.Empty(t, ephemeralsOf(t, hs.Client(), path, ws.Client().SessionID()), "the cancelled waiter left a node")
	require.Equal(t, want, ephemeralsUnder(t, hs.Client(), path), "the holder's nodes changed")
	px.Heal()

	require.NoError(t, holder.release(ctx))
	require.NoError(t, w.acquire(ctx), "the handle acquires after a cancelled acquisition")
	require.NoError(t, w.release(ctx))
	require.Empty(t, ephemeralsUnder(t, hs.Client(), path))
}

// herdWaiters is how many contenders queue in the herd contract: a release
// that woke them all would cost at least one request each.
const herdWaiters = 32

// contractHerd: a release with herdWaiters contenders queued costs O(1)
// server requests, counted once every waiter has set its watch, and up to
// the moment every waiter left has set it again.
func contractHerd(t *testing.T, _ string, p primitive) {
	c, ss := herdServer(t, herdWaiters+1)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	holder := p.rival(t, ss[0], path)
	require.NoError(t, holder.acquire(ctx))
	granted := make(chan int, herdWaiters)
	ws := make([]*party, herdWaiters)
	for i := range ws {
		ws[i] = p.ours(t, ss[i+1], path)
		go func() {
			if ws[i].acquire(ctx) == nil {
				granted <- i
			}
		}()
	}
	// Each waiter watches one node (the one that blocks it, or, for a
	// semaphore's head, the lease set) from a session of its own, so no two
	// share a watch (readers behind one writer all watch it, one watch per
	// session), and the holder keeps holderWatches.
	awaitWatches(t, c, int64(herdWaiters+p.holderWatches))
	// After the release, every waiter still waiting watches again, and the
	// new holder keeps holderWatches. The server drops the watches a release
	// fires before the new holder hears of it, so the count first falls
	// below this (for a semaphore, the next head watches the lease set only
	// once it has queued its lease) and reaches it once all is settled.
	settled := int64(herdWaiters - 1 + p.holderWatches)
	if p.grantsAll {
		settled = int64(p.holderWatches)
	}
	var order []int
	caused, idle := requestsUntil(t, c, func() {
		require.NoError(t, holder.release(ctx))
		order = append(order, receive(t, granted, 10*time.Second))
		for p.grantsAll && len(order) < herdWaiters {
			order = append(order, receive(t, granted, 10*time.Second))
		}
	}, settled)
	t.Logf("one release with %d waiters queued: %d requests (idle baseline %d)", herdWaiters, caused, idle)
	require.Less(t, caused, int64(herdWaiters/4), "a release woke more than it granted")
	if p.grantsAll {
		for _, i := range order {
			require.NoError(t, ws[i].release(ctx))
		}
		return
	}
	for len(order) < herdWaiters { // hand over down the queue
		require.NoError(t, ws[order[len(order)-1]].release(ctx))
		order = append(order, receive(t, granted, 10*time.Second))
	}
	require.NoError(t, ws[order[len(order)-1]].release(ctx))
}

// contractLossBeforeRival: a holder cut off from the server past its
// session timeout sees its loss signal fire before a rival on another
// session acquires, and its release then reports the loss.
func contractLossBeforeRival(t *testing.T, _ string, p primitive) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	px := zktest.NewProxy(t, c.Servers())
	cut := newSession(t, px.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	rs := newSession(t, c.Servers())
	h := p.ours(t, cut, path)
	require.NoError(t, h.acquire(ctx))
	lost := h.lost()
	rival := p.rival(t, rs, path)
	res := async(func() error { return rival.acquire(ctx) })
	awaitEphemeralOf(t, rs.Client(), path, rs.Client().SessionID()) // the rival waits

	px.Blackhole()
	var lostAt time.Time
	select {
	case <-lost:
		lostAt = time.Now()
	case r := <-res:
		t.Fatalf("the rival acquired (err %v) before the holder's loss signal", r.err)
	case <-time.After(10 * time.Second):
		t.Fatal("no loss signal within 10s of the cut")
	}
	r := await(t, res, 20*time.Second, "the rival")
	require.NoError(t, r.err)
	require.True(t, r.at.After(lostAt), "the rival acquired before the holder's loss signal")
	t.Logf("the loss signal led the rival's acquisition by %v", r.at.Sub(lostAt))
	require.ErrorIs(t, h.release(ctx), p.lostErr)
	px.Heal()
	require.NoError(t, rival.release(ctx))
}

// contractReenqueue: a waiter whose session expires queues again under its
// new session, and acquires with a node of that session once the holder
// releases (never on the strength of its old node: CURATOR-604,
// etcd#19597).
func contractReenqueue(t *testing.T, _ string, p primitive) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	hs := newSession(t, c.Servers())
	holder := p.rival(t, hs, path)
	require.NoError(t, holder.acquire(ctx))
	px := zktest.NewProxy(t, c.Servers())
	ws := newSession(t, px.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	w := p.ours(t, ws, path)
	res := async(func() error { return w.acquire(ctx) })
	old := ws.Client().SessionID()
	awaitEphemeralOf(t, hs.Client(), path, old)

	require.NoError(t, c.ExpireSession(ctx, px, old))
	eventually(t, 20*time.Second, "a new session", func() bool { return ws.Client().SessionID() != old })
	sid := ws.Client().SessionID()
	awaitEphemeralOf(t, hs.Client(), path, sid) // queued again
	select {
	case r := <-res:
		t.Fatalf("the waiter returned (err %v) while the holder holds", r.err)
	default:
	}
	require.NoError(t, holder.release(ctx))
	require.NoError(t, await(t, res, 10*time.Second, "the re-enqueued waiter").err)
	st, _, err := hs.Client().Exists(ctx, w.node())
	require.NoError(t, err)
	require.Equal(t, sid, st.EphemeralOwner, "the waiter holds with a node of its new session")
	require.Equal(t, st.Czxid<<12, w.token())
	require.NoError(t, w.release(ctx))
	require.Empty(t, ephemeralsUnder(t, hs.Client(), path))
}

// The holder process of contractKilled is this test binary run again with
// TestContractHelperProcess selected and these variables set.
const (
	helperServerEnv    = "ZKLOCK_HELPER_SERVER"
	helperPathEnv      = "ZKLOCK_HELPER_PATH"
	helperPrimitiveEnv = "ZKLOCK_HELPER_PRIMITIVE"
	helperTimeout      = 2 * time.Second // the holder's session timeout
)

// contractKilled: when the holder's process is SIGKILLed (no chance to
// clean up), a waiter acquires once the server expires the holder's
// session: within its timeout plus a bound.
func contractKilled(t *testing.T, name string, p primitive) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	cmd := exec.CommandContext(ctx, os.Args[0], "-test.run=^TestContractHelperProcess$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperServerEnv+"="+c.Servers()[0], helperPathEnv+"="+path,
		helperPrimitiveEnv+"="+name)
	out, err := cmd.StdoutPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	expectLine(t, readLines(out), "held ")

	s := newSession(t, c.Servers())
	w := p.rival(t, s, path)
	res := async(func() error { return w.acquire(ctx) })
	awaitEphemeralOf(t, s.Client(), path, s.Client().SessionID()) // the waiter waits
	require.NoError(t, cmd.Process.Kill())
	killed := time.Now()
	r := await(t, res, 30*time.Second, "the waiter after the kill")
	require.NoError(t, r.err)
	took := r.at.Sub(killed)
	t.Logf("the waiter acquired %v after the holder was killed (session timeout %v)", took, helperTimeout)
	require.Less(t, took, helperTimeout+2*c.TickTime()+3*time.Second,
		"the server must expire the dead holder's session within its timeout")
	require.NoError(t, w.release(ctx))
}

// TestContractHelperProcess is the holder process of contractKilled: it
// acquires the primitive named by ZKLOCK_HELPER_PRIMITIVE, prints "held"
// and its node, and waits to be killed (for a minute at most). It skips in
// a normal run.
func TestContractHelperProcess(t *testing.T) {
	server, path := os.Getenv(helperServerEnv), os.Getenv(helperPathEnv)
	if server == "" {
		t.Skip("run by TestContracts/holder_SIGKILLed")
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(server), zklock.WithSessionTimeout(helperTimeout))
	require.NoError(t, err)
	defer s.Close()
	p, ok := primitives[os.Getenv(helperPrimitiveEnv)]
	require.True(t, ok, "no primitive %q", os.Getenv(helperPrimitiveEnv))
	h := p.ours(t, s, path)
	require.NoError(t, h.acquire(ctx))
	fmt.Println("held", h.node())
	<-ctx.Done()
}

// contractTokens: tokens strictly increase across acquisitions even when
// the lock path is deleted after each release and created again (as the
// server does when it reaps an empty CONTAINER), where node sequence
// numbers start over.
func contractTokens(t *testing.T, _ string, p primitive) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	s := newSession(t, c.Servers())
	h := p.ours(t, s, path)
	var token, parent int64
	for round := range 3 {
		require.NoError(t, h.acquire(ctx))
		require.Greater(t, h.token(), token, "round %d", round)
		token = h.token()
		st, _, err := s.Client().Exists(ctx, parentOf(h.node()))
		require.NoError(t, err)
		require.Greater(t, st.Czxid, parent, "round %d: the node's parent was not created again", round)
		parent = st.Czxid
		require.NoError(t, h.release(ctx))
		deleteTree(t, s.Client(), path)
	}
}

// contractReplyLost: when the connection is reset after the server got our
// create but before its reply came back, the acquisition still succeeds,
// and exactly one node remains: ours, of our session, its czxid the token.
func contractReplyLost(t *testing.T, _ string, p primitive) {
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "lock")
	px := zktest.NewProxy(t, c.Servers())
	s := newSession(t, px.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	obs := newSession(t, c.Servers())
	h := p.ours(t, s, path)
	for attempt := 1; ; attempt++ {
		require.NoError(t, h.acquire(ctx)) // the parents exist now
		dir := parentOf(h.node())
		require.NoError(t, h.release(ctx))
		before, _, err := obs.Client().Exists(ctx, dir)
		require.NoError(t, err)
		var hit atomic.Bool
		px.ResetAfterRequest(func(op int32) bool { return op == 15 && !hit.Swap(true) }) // create2
		require.NoError(t, h.acquire(ctx))
		require.True(t, hit.Load(), "no create was sent")
		after, _, err := obs.Client().Exists(ctx, dir)
		require.NoError(t, err)
		if after.Czxid == before.Czxid {
			break // the lost reply was our node's create's
		}
		// The server reaped the emptied parent first: the lost reply was
		// that of a create that failed. Try again.
		require.Less(t, attempt, 3, "the parent was reaped before every attempt")
		require.NoError(t, h.release(ctx))
	}
	require.Equal(t, []string{h.node()}, ephemeralsUnder(t, obs.Client(), path), "exactly one node, ours")
	st, _, err := obs.Client().Exists(ctx, h.node())
	require.NoError(t, err)
	require.Equal(t, s.Client().SessionID(), st.EphemeralOwner)
	require.Equal(t, st.Czxid<<12, h.token(), "the token is the node's czxid << 12")
	require.NoError(t, h.release(ctx))
	require.Empty(t, ephemeralsUnder(t, obs.Client(), path))
}

// parentOf returns the parent of a node's path.
func parentOf(node string) string { return node[:strings.LastIndex(node, "/")] }

// deleteTree deletes p and everything below it; what is already gone is
// fine.
func deleteTree(t *testing.T, conn *zk.Client, p string) {
	t.Helper()
	kids, _, err := conn.Children(t.Context(), p)
	if errors.Is(err, zk.ErrNoNode) {
		return
	}
	require.NoError(t, err)
	for _, k := range kids {
		deleteTree(t, conn, p+"/"+k)
	}
	if err := conn.Delete(t.Context(), p, -1); !errors.Is(err, zk.ErrNoNode) {
		require.NoError(t, err)
	}
}
