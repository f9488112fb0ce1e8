package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// Review 48s: an adversarial review of the sequence layout, briefed with
// its claims. Each test below states the claim it tries to break.

// TestReviewSeq48sUnlockAfterBreakReplyLost (claim 3: "Unlock of a hold
// whose node is gone returns ErrLockLost", nil only while a node named
// like the holder's stands, made by a contender that took the path's
// earlier life for current). Here nothing of the kind exists: a's node
// is Broken, a rival b waiting behind it holds in the same life of the
// path (so no name repeats), and the reply to a's Unlock (the multi: set
// data + delete, answered NoNode) is lost. The retry after the reconnect
// finds no node and takes it for its own first attempt having applied:
// Unlock returned nil for a hold that was gone before it was called,
// while b holds. Nothing left on the server tells the two apart (a read
// would find the node gone either way), so this is now a stated limit
// (WithSequenceLayout: "a retry after a lost reply that finds the node
// gone returns nil"); what must hold is that b's node stays and nobody
// holds beside b.
func TestReviewSeq48sUnlockAfterBreakReplyLost(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	px := zktest.NewProxy(t, srv.Servers())
	s1 := newSession(t, px.Addrs())
	s2 := newSession(t, srv.Servers())
	p := lockPath(t, "seq")
	a, b := seqMutex(t, s1, p), seqMutex(t, s2, p)
	if err := a.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	bDone := make(chan error, 1)
	go func() { bDone <- b.Lock(ctx) }()
	eventually(t, 10*time.Second, "b queued behind a", func() bool { return len(seqNodes(t, s2, p)) == 2 })
	broken, err := zklock.Break(ctx, s2, p, true)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-bDone:
		if err != nil {
			t.Fatalf("b's Lock after the Break: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("b did not hold within 10s of the Break")
	}
	held := seqNodes(t, s2, p)
	if len(held) != 1 || len(broken) != 1 || held[0] == broken[0].Path {
		t.Fatalf("precondition: broke %v, b's queue %v", broken, held)
	}
	conns, _, _ := px.Stats()
	px.ResetAfterRequest(func(op int32) bool { return op == 14 }) // multi: the reply to Unlock's
	err = a.Unlock(ctx)
	if after, _, _ := px.Stats(); after == conns {
		t.Fatalf("precondition: the reply to a's Unlock was not cut (Unlock: %v)", err)
	}
	if err != nil && !errors.Is(err, zklock.ErrLockLost) {
		t.Errorf("a's Unlock of its Broken hold (node %s gone before Unlock, no node of that name since; b holds %s), "+
			"its reply lost: %v, want ErrLockLost or nil (the stated limit)", broken[0].Path, held[0], err)
	}
	c := seqMutex(t, newSession(t, srv.Servers()), p)
	if err := c.TryLock(ctx); !errors.Is(err, zklock.ErrLocked) {
		t.Errorf("a third contender's TryLock while b holds: %v, want ErrLocked", err)
		if err == nil {
			_ = c.Unlock(ctx)
		}
	}
	if got := seqNodes(t, s2, p); !slices.Equal(got, held) {
		t.Errorf("b's queue after a's Unlock: %v, want %v", got, held)
	}
	if err := b.Unlock(ctx); err != nil {
		t.Errorf("b's Unlock: %v", err)
	}
}

// staleStanding sets up a node named after a lock path's earlier life
// standing in its current life for as long as its maker is cut off: h
// (s1) holds p; y (through px) learns p's czxid (a refused TryLock); a
// Break ends h's hold and the server reaps p; p is made again, empty, by
// hand (a create of y's would find p missing, and its session would learn
// the new czxid first); y's Lock makes its node under the old czxid, the
// first child (number 0, h's node's name), and the connection is reset
// right after that create went up while new connections are refused, so y
// never reads the reply that would tell it p's new czxid. Then r (s2),
// a fresh handle, holds under the new czxid. It returns the stale node,
// r's node, when the stale node was first seen, and y's Lock's outcome;
// the caller heals px when done.
func staleStanding(ctx context.Context, t *testing.T, s1, s2, sy *zklock.Session, px *zktest.Proxy, p string) (h, y, r *zklock.Mutex,
	stale, rNode string, seen time.Time, yDone <-chan error) {
	t.Helper()
	h, y, r = seqMutex(t, s1, p), seqMutex(t, sy, p), seqMutex(t, s2, p)
	// p made by hand, empty (never reaped before its first child), so that
	// h, knowing its czxid, is its first child: number 0, the number y's
	// node gets when it re-creates p.
	mkdirs(t, s2.Client(), path.Dir(p))
	if _, err := s2.Client().Create(ctx, p, nil, zk.ModeContainer, zk.WorldACL(zk.PermAll)...); err != nil {
		t.Fatal(err)
	}
	if err := h.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	if err := y.TryLock(ctx); !errors.Is(err, zklock.ErrLocked) {
		t.Fatalf("y's TryLock while h holds: %v", err)
	}
	st, _, err := s2.Client().Exists(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	old := fmt.Sprintf("%x-seqlock-", st.Czxid)
	if _, err := zklock.Break(ctx, s2, p, true); err != nil {
		t.Fatal(err)
	}
	eventually(t, 20*time.Second, "the empty container reaped", func() bool {
		_, ok, err := s2.Client().Exists(ctx, p)
		return err == nil && !ok
	})
	if _, err := s2.Client().Create(ctx, p, nil, zk.ModeContainer, zk.WorldACL(zk.PermAll)...); err != nil {
		t.Fatal(err)
	}
	// y's session knows p (and its old czxid): its create is sent alone,
	// and cut right after it went up.
	px.Refuse(true)
	px.ResetAfterRequest(func(op int32) bool { return op == 15 }) // create2 of y's node
	done := make(chan error, 1)
	ydone := make(chan error, 1)
	yctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	go func() { done <- y.Lock(yctx) }()
	go func() { err := <-done; cancel(); ydone <- err }()
	t.Cleanup(func() { cancel(); px.Heal() })
	eventually(t, 10*time.Second, "y's node named after the earlier life", func() bool {
		for _, n := range nodeNames(t, s2, p) {
			if strings.HasPrefix(n, old) {
				stale = p + "/" + n
				return true
			}
		}
		return false
	})
	seen = time.Now()
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	defer rcancel()
	if err := r.Lock(rctx); err != nil {
		t.Fatalf("r's Lock beside the stale node %s: %v", stale, err)
	}
	st, _, err = s2.Client().Exists(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	for _, n := range seqNodes(t, s2, p) {
		if strings.HasPrefix(n, p+"/"+fmt.Sprintf("%x-seqlock-", st.Czxid)) {
			rNode = n
		}
	}
	if rNode == "" {
		t.Fatalf("precondition: no node of r under the czxid %x: %v", st.Czxid, seqNodes(t, s2, p))
	}
	if _, ok, err := s2.Client().Exists(ctx, stale); err != nil || !ok {
		t.Fatalf("precondition: the stale node %s was gone before r held (%v)", stale, err)
	}
	return h, y, r, stale, rNode, seen, ydone
}

// TestReviewSeq48sBreakTakesStaleNodeForHolder (claim 3's "no waiter
// takes that node for a contender", and Break's "deletes the nodes of a
// lock's holders", claim 1 "across a Break"): the waiters are right to
// ignore a node named after the path's earlier life, but Contenders and
// Break order every "seqlock-" node by its number alone. A stale node
// that re-created the path has the lowest number: Contenders names it the
// holder, and Break deletes it and returns it as broken while r, the
// holder, goes on holding.
func TestReviewSeq48sBreakTakesStaleNodeForHolder(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	px := zktest.NewProxy(t, srv.Servers())
	s1, s2 := newSession(t, srv.Servers()), newSession(t, srv.Servers())
	sy := newSession(t, px.Addrs())
	p := lockPath(t, "seq")
	h, y, r, stale, rNode, _, yDone := staleStanding(ctx, t, s1, s2, sy, px, p)

	cs, err := zklock.Contenders(ctx, s2, p)
	if err != nil {
		t.Fatal(err)
	}
	var holders []string
	for _, c := range cs {
		if c.Holds {
			holders = append(holders, c.Path)
		}
	}
	if !slices.Equal(holders, []string{rNode}) {
		t.Errorf("Contenders while r holds %s (stale node %s standing): holders %v, want [%s]", rNode, stale, holders, rNode)
	}
	broken, err := zklock.Break(ctx, s2, p, true)
	var got []string
	for _, c := range broken {
		got = append(got, c.Path)
	}
	_, rStands, xerr := s2.Client().Exists(ctx, rNode)
	if err != nil || xerr != nil || !slices.Equal(got, []string{rNode}) || rStands {
		t.Errorf("Break while r holds %s beside the stale node %s: broke %v (err %v); r's node still stands: %v (%v)",
			rNode, stale, got, err, rStands, xerr)
	}
	px.Heal()
	if rStands {
		if err := r.Unlock(ctx); err != nil {
			t.Errorf("r's Unlock: %v", err)
		}
	}
	_ = h.Unlock(ctx) // Broken: ErrLockLost or nil, not what this test is about
	yHoldsLast(ctx, t, y, yDone, s2, p)
}

// TestReviewSeq48sStaleUnlockWindow (claim 3's stated limit: nil "in one
// case, when a node named like the holder's exists for one round trip";
// claim 2): the node a contender made under the path's earlier czxid
// stands not for one round trip but for as long as that contender is cut
// off (up to its session timeout): a reply lost is enough. The old
// holder's Unlock then writes into it and deletes it and returns nil (the
// limit's wording now says so). No third contender may hold beside r,
// and y, once back, must hold only after r.
func TestReviewSeq48sStaleUnlockWindow(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	px := zktest.NewProxy(t, srv.Servers())
	s1, s2 := newSession(t, srv.Servers()), newSession(t, srv.Servers())
	sy := newSession(t, px.Addrs())
	p := lockPath(t, "seq")
	h, y, r, stale, rNode, seen, yDone := staleStanding(ctx, t, s1, s2, sy, px, p)
	// One round trip on loopback is well under 50ms; wait past it.
	time.Sleep(300*time.Millisecond - time.Since(seen))
	_, stands, err := s2.Client().Exists(ctx, stale)
	if err != nil {
		t.Fatal(err)
	}
	standing := time.Since(seen)
	if !stands {
		t.Fatalf("precondition: the stale node %s was gone %v after it was seen", stale, standing)
	}
	hErr := h.Unlock(ctx)
	t.Logf("stale node %s standing %v; h's Unlock: %v", stale, standing.Round(time.Millisecond), hErr)
	// The stated limit (WithSequenceLayout), widened by this test: such a
	// node stands while its maker is cut off (up to its session timeout),
	// and the Unlock of a Broken hold of its name deletes it and returns
	// nil. What must hold: r's node stays, nobody holds beside r, and y
	// holds only after r.
	if hErr != nil && !errors.Is(hErr, zklock.ErrLockLost) {
		t.Errorf("h's Unlock of its Broken hold, a node named like it (%s, y's, made under the earlier czxid) standing for %v: %v, want nil or ErrLockLost",
			stale, standing.Round(time.Millisecond), hErr)
	}
	if _, ok, err := s2.Client().Exists(ctx, rNode); err != nil || !ok {
		t.Errorf("r's node %s after h's Unlock: exists %v (%v)", rNode, ok, err)
	}
	c := seqMutex(t, newSession(t, srv.Servers()), p)
	if err := c.TryLock(ctx); !errors.Is(err, zklock.ErrLocked) {
		t.Errorf("a third contender's TryLock while r holds: %v, want ErrLocked", err)
		if err == nil {
			_ = c.Unlock(ctx)
		}
	}
	px.Heal()
	select {
	case err := <-yDone:
		t.Fatalf("y's Lock returned %v while r holds", err)
	case <-time.After(500 * time.Millisecond): // y reconnects and queues behind r
	}
	if err := r.Unlock(ctx); err != nil {
		t.Errorf("r's Unlock: %v", err)
	}
	yHoldsLast(ctx, t, y, yDone, s2, p)
}

// yHoldsLast waits for y's Lock (started by staleStanding) to hold once r
// released, unlocks it, and waits until nothing is left under p.
func yHoldsLast(ctx context.Context, t *testing.T, y *zklock.Mutex, yDone <-chan error, s2 *zklock.Session, p string) {
	t.Helper()
	select {
	case err := <-yDone:
		if err != nil {
			t.Fatalf("y's Lock: %v", err)
		}
	case <-time.After(20 * time.Second):
		t.Fatal("y's Lock did not return within 20s of r's release")
	}
	if err := y.Unlock(ctx); err != nil {
		t.Errorf("y's Unlock: %v", err)
	}
	eventually(t, 10*time.Second, "no node left", func() bool { return len(nodeNames(t, s2, p)) == 0 })
}

// TestReviewSeq48sWireLayout (claim 7): a node is named "<the lock
// path's czxid, lowercase hex>-seqlock-<10-digit sequence>" directly under
// the lock path, and its data is the user's data followed by zklock's tag
// and token.
func TestReviewSeq48sWireLayout(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	p := lockPath(t, "seq")
	m, err := zklock.NewMutex(s, p, zklock.WithSequenceLayout(), zklock.WithData([]byte("user")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer func() {
		if err := m.Unlock(ctx); err != nil {
			t.Error(err)
		}
	}()
	st, _, err := s.Client().Exists(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	names := nodeNames(t, s, p)
	if len(names) != 1 {
		t.Fatalf("children %v, want one", names)
	}
	var seq int32
	want := fmt.Sprintf("%x-seqlock-", st.Czxid)
	if _, err := fmt.Sscanf(strings.TrimPrefix(names[0], want), "%010d", &seq); err != nil ||
		names[0] != fmt.Sprintf("%s%010d", want, seq) || strings.ToLower(names[0]) != names[0] {
		t.Errorf("node %q, want %q followed by 10 digits (%v)", names[0], want, err)
	}
	data, _, err := s.Client().Get(ctx, p+"/"+names[0])
	if err != nil {
		t.Fatal(err)
	}
	const tag = "\x00zklock:s"
	rest, ok := strings.CutPrefix(string(data), "user"+tag)
	if !ok || len(rest) < 16 || strings.Trim(rest[:16], "0123456789abcdef") != "" {
		t.Errorf("node data %q, want %q, 16 hex digits", data, "user"+tag)
	}
	t.Logf("node %s, data %q (after the token: %q)", names[0], data, rest[min(16, len(rest)):])
}

// TestReviewSeq48sUnlockOneRequest (claim 4): Unlock sends one request,
// a multi, with no read first, both for a live hold and for a Broken one.
// The proxy's request hook records every opcode and never cuts.
func TestReviewSeq48sUnlockOneRequest(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	px := zktest.NewProxy(t, srv.Servers())
	s1, s2 := newSession(t, px.Addrs()), newSession(t, srv.Servers())
	p := lockPath(t, "seq")
	m := seqMutex(t, s1, p)
	for _, broken := range []bool{false, true} {
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if broken {
			if _, err := zklock.Break(ctx, s2, p, true); err != nil {
				t.Fatal(err)
			}
		}
		var ops []int32
		px.ResetAfterRequest(func(op int32) bool {
			if op != 11 { // pings
				ops = append(ops, op)
			}
			return false
		})
		err := m.Unlock(ctx)
		px.Heal() // orders the hook's writes before the read below
		if want := []int32{14}; !slices.Equal(ops, want) {
			t.Errorf("broken %v: Unlock sent opcodes %v, want %v (multi)", broken, ops, want)
		}
		switch {
		case broken && !errors.Is(err, zklock.ErrLockLost):
			t.Errorf("Unlock of a Broken hold: %v, want ErrLockLost", err)
		case !broken && err != nil:
			t.Errorf("Unlock: %v", err)
		}
	}
}

// TestReviewSeq48sReapCyclesExclusion (claims 1 and 5, "handles that used
// the path before it was reaped and use it again after", "TryLock beside
// Lock"): four handles on two Sessions, two with Lock and two with TryLock
// until granted, lock the path at once, round after round; between rounds
// the server reaps the empty path, so every handle's next Lock starts
// from the path's earlier czxid (its first create is named after it and
// discarded). No two hold at once, every Unlock returns nil, and nothing
// is left after a round.
func TestReviewSeq48sReapCyclesExclusion(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	ss := []*zklock.Session{newSession(t, srv.Servers()), newSession(t, srv.Servers())}
	p := lockPath(t, "seq")
	var ms []*zklock.Mutex
	for i := range 4 {
		ms = append(ms, seqMutex(t, ss[i%2], p))
	}
	const rounds = 4
	for round := range rounds {
		var inside, worst int32
		var mu = make(chan struct{}, 1)
		errs := make(chan error, len(ms))
		for i, m := range ms {
			go func() {
				lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
				defer cancel()
				if err := acquireSeq(lctx, m, i%2 == 1); err != nil {
					errs <- fmt.Errorf("round %d handle %d: %w", round, i, err)
					return
				}
				mu <- struct{}{}
				inside++
				worst = max(worst, inside)
				<-mu
				time.Sleep(10 * time.Millisecond) // the critical section
				mu <- struct{}{}
				inside--
				<-mu
				if err := m.Unlock(ctx); err != nil {
					errs <- fmt.Errorf("round %d handle %d Unlock: %w", round, i, err)
					return
				}
				errs <- nil
			}()
		}
		for range ms {
			if err := <-errs; err != nil {
				t.Error(err)
			}
		}
		if worst != 1 {
			t.Errorf("round %d: %d handles held at once", round, worst)
		}
		eventually(t, 20*time.Second, fmt.Sprintf("round %d: the empty path reaped", round), func() bool {
			_, ok, err := ss[0].Client().Exists(ctx, p)
			return err == nil && !ok
		})
	}
}

// acquireSeq locks m: with Lock, or with TryLock, again every 5ms while
// it is refused (ErrLocked), until ctx ends.
func acquireSeq(ctx context.Context, m *zklock.Mutex, try bool) error {
	if !try {
		return m.Lock(ctx)
	}
	for refused := 0; ; refused++ {
		err := m.TryLock(ctx)
		if !errors.Is(err, zklock.ErrLocked) {
			return err
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("TryLock refused %d times: %w", refused+1, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
}

// TestReviewSeq48sChurnGrantsAreFirst (claims 1 and 3, several attack
// classes at once): six handles on two Sessions (one behind a proxy that
// cuts a create2 now and then) Lock or TryLock, hold briefly and Unlock
// (in phases of 1.5s, with idle phases as long, in which the path is
// reaped),
// while a third Session Breaks the holder now and then and the path is
// reaped whenever it empties. At each grant the checker lists the path:
// the granted node (found by its token, the node's czxid << 12) must be
// named after the path's czxid and no node named after it may have a
// lower number (numbers only grow, and a grant waits for the deletion of
// every node ahead). A granted node gone by the listing (Broken) is not
// judged.
func TestReviewSeq48sChurnGrantsAreFirst(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	px := zktest.NewProxy(t, srv.Servers())
	ss := []*zklock.Session{newSession(t, px.Addrs()), newSession(t, srv.Servers())}
	sb := newSession(t, srv.Servers())
	p := lockPath(t, "seq")
	end := time.Now().Add(18 * time.Second)
	stop := make(chan struct{})
	var bg, workers sync.WaitGroup
	bg.Add(1)
	go func() { // the operator and the network
		defer bg.Done()
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(150 * time.Millisecond):
			}
			if i%3 == 0 {
				_, _ = zklock.Break(ctx, sb, p, true)
			}
			if i%4 == 1 {
				px.ResetAfterRequest(func(op int32) bool { return op == 15 })
			}
		}
	}()
	type grant struct{ judged, violations int }
	results := make(chan grant, 6)
	var msgs, lives sync.Map
	for i := range 6 {
		workers.Add(1)
		go func() {
			defer workers.Done()
			m := seqMutex(t, ss[i%2], p)
			var g grant
			defer func() { results <- g }()
			for n := 0; time.Now().Before(end); n++ {
				// Active 1.5s, idle 1.5s: while all idle the path empties
				// and is reaped, and each handle's next create starts from
				// the czxid of a life that is gone.
				if phase := time.Until(end) / (1500 * time.Millisecond); phase%2 == 1 {
					time.Sleep(50 * time.Millisecond)
					continue
				}
				lctx, cancel := context.WithTimeout(ctx, 3*time.Second)
				err := acquireOnce(lctx, m, n%3 == 2)
				cancel()
				if err != nil {
					continue // refused, timed out under churn: not a grant
				}
				tok := m.Token()
				bad, life := judgeGrant(ctx, sb, p, tok)
				lives.Store(life, true)
				if bad != "" {
					if bad != "gone" {
						g.violations++
						msgs.Store(fmt.Sprintf("handle %d grant %d", i, n), bad)
					}
				} else {
					g.judged++
				}
				time.Sleep(5 * time.Millisecond)
				_ = m.Unlock(ctx) // ErrLockLost after a Break: fine here
			}
		}()
	}
	workers.Wait()
	close(stop)
	bg.Wait()
	px.Heal()
	var total grant
	for range 6 {
		g := <-results
		total.judged += g.judged
		total.violations += g.violations
	}
	msgs.Range(func(k, v any) bool { t.Errorf("%s: %s", k, v); return true })
	nLives := 0
	lives.Range(func(any, any) bool { nLives++; return true })
	conns, _, _ := px.Stats()
	t.Logf("%d grants judged, %d violations; %d lives of the path seen at grants; %d connections through the proxy (cuts)",
		total.judged, total.violations, nLives, conns)
	eventually(t, 10*time.Second, "every node of the churn gone (claim 5)", func() bool { return len(nodeNames(t, sb, p)) == 0 })
	if total.judged < 20 {
		t.Errorf("only %d grants judged: the churn did not exercise the lock", total.judged)
	}
}

// acquireOnce is Lock, or one TryLock.
func acquireOnce(ctx context.Context, m *zklock.Mutex, try bool) error {
	if try {
		return m.TryLock(ctx)
	}
	return m.Lock(ctx)
}

// judgeGrant lists p after a grant with token tok: "" when the granted
// node is first among the nodes named after p's czxid, "gone" when it is
// no longer there, else what is wrong; and p's czxid.
func judgeGrant(ctx context.Context, s *zklock.Session, p string, tok int64) (string, int64) {
	st, ok, err := s.Client().Exists(ctx, p)
	if err != nil || !ok {
		return "gone", 0
	}
	return judgeIn(ctx, s, p, tok, st.Czxid), st.Czxid
}

func judgeIn(ctx context.Context, s *zklock.Session, p string, tok, czxid int64) string {
	cs, err := zklock.Contenders(ctx, s, p)
	if err != nil {
		return "gone"
	}
	st := struct{ Czxid int64 }{czxid}
	cur := p + "/" + fmt.Sprintf("%x-seqlock-", st.Czxid)
	var mine *zklock.Contender
	for i := range cs {
		if cs[i].Token == tok {
			mine = &cs[i]
		}
	}
	if mine == nil {
		return "gone"
	}
	if !strings.HasPrefix(mine.Path, cur) {
		return fmt.Sprintf("granted %s, not named after the path's czxid %x", mine.Path, st.Czxid)
	}
	for _, c := range cs {
		if strings.HasPrefix(c.Path, cur) && c.Seq < mine.Seq {
			return fmt.Sprintf("granted %s while %s stands ahead of it", mine.Path, c.Path)
		}
	}
	return ""
}
