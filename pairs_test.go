package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// The pairs of primitive and feature (issue 34), on a real ZooKeeper
// through the public API: each test asserts the safety property of its
// pairs (no hold returned or kept with Lost open while a rival holds,
// nothing left behind). The table of every pair, with the test that
// covers it, is in docs/recipes.md ("What happens when…").

// lockHolder is one lock handle in the dialect the pair tests need.
type lockHolder struct {
	lock, unlock func(context.Context) error
	lost         func() <-chan struct{}
	revoked      func() <-chan struct{}
	token        func() int64
	node         func() string
	guard        func() *zk.CheckOp
}

// lockKind makes a holder on path, and a rival for it (a writer for a
// reader), with opts.
type lockKind struct {
	name  string
	ours  func(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) lockHolder
	rival func(t *testing.T, s *zklock.Session, path string) lockHolder
	// reentry is what locking again while the loss signal has fired
	// returns within a short ctx: ErrLockLost where the handle counts
	// re-entries; elsewhere the new acquisition waits (the handle's slot
	// is taken by the lost hold until it is released, and a rival holds).
	reentry error
}

func mutexHolder(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) lockHolder {
	m, err := zklock.NewMutex(s, path, opts...)
	require.NoError(t, err)
	return lockHolder{m.Lock, m.Unlock, m.Lost, func() <-chan struct{} { return zklock.RevokedOf(m) }, m.Token, func() string { return zklock.NodeOf(m) }, m.Guard}
}

func reentrantHolder(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) lockHolder {
	m, err := zklock.NewReentrantMutex(s, path, opts...)
	require.NoError(t, err)
	return lockHolder{m.Lock, m.Unlock, m.Lost, func() <-chan struct{} { return zklock.RevokedOf(m) }, m.Token, func() string { return zklock.NodeOf(m) }, m.Guard}
}

func readHolder(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) lockHolder {
	m, err := zklock.NewRWMutex(s, path, opts...)
	require.NoError(t, err)
	return lockHolder{m.RLock, m.RUnlock, m.Lost, func() <-chan struct{} { return zklock.RevokedOf(m) }, m.Token, func() string { return zklock.NodeOf(m) }, m.Guard}
}

func writeHolder(t *testing.T, s *zklock.Session, path string, opts ...zklock.Option) lockHolder {
	m, err := zklock.NewRWMutex(s, path, opts...)
	require.NoError(t, err)
	return lockHolder{m.Lock, m.Unlock, m.Lost, func() <-chan struct{} { return zklock.RevokedOf(m) }, m.Token, func() string { return zklock.NodeOf(m) }, m.Guard}
}

func plainRival(ours func(*testing.T, *zklock.Session, string, ...zklock.Option) lockHolder) func(*testing.T, *zklock.Session, string) lockHolder {
	return func(t *testing.T, s *zklock.Session, path string) lockHolder { return ours(t, s, path) }
}

var lockKinds = []lockKind{
	{"Mutex", mutexHolder, plainRival(mutexHolder), context.DeadlineExceeded},
	{"ReentrantMutex", reentrantHolder, plainRival(reentrantHolder), zklock.ErrLockLost},
	{"RWMutex read", readHolder, plainRival(writeHolder), context.DeadlineExceeded},
	{"RWMutex write", writeHolder, plainRival(writeHolder), context.DeadlineExceeded},
}

// rivalWaits starts rival.lock and returns its outcome, once rs's node is
// queued at path and watches node.
func rivalWaits(ctx context.Context, t *testing.T, c server, rs *zklock.Session, rival lockHolder, node string) <-chan timedErr {
	t.Helper()
	got := make(chan timedErr, 1)
	go func() { err := rival.lock(ctx); got <- timedErr{err, time.Now()} }()
	eventually(t, 10*time.Second, "the rival waits for our node", func() bool { return watches(t, c, rs.Client().SessionID(), node) })
	return got
}

type timedErr struct {
	err error
	at  time.Time
}

// WithMaxHold on every lock: the loss signal fires at the bound, before the
// rival holds; re-entry then fails; the release reports the loss, and
// nothing is left.
func TestPairsMaxHold(t *testing.T) {
	c := standalone(t)
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := ctxFor(t)
			path := lockPath(t, "lock")
			s := newSession(t, c.Servers())
			h := k.ours(t, s, path, zklock.WithMaxHold(300*time.Millisecond))
			asked := time.Now() // the bound counts from the grant, after this and before lock returns
			require.NoError(t, h.lock(ctx))
			lost := h.lost()
			rs := newSession(t, c.Servers())
			rival := k.rival(t, rs, path)
			got := rivalWaits(ctx, t, c, rs, rival, h.node())
			var lostAt time.Time
			select {
			case <-lost:
				lostAt = time.Now()
			case r := <-got:
				t.Fatalf("the rival returned (%v) before our loss signal", r.err)
			case <-ctx.Done():
				t.Fatal("no loss signal at the bound")
			}
			r := <-got
			require.NoError(t, r.err)
			require.True(t, r.at.After(lostAt), "the rival held before our loss signal")
			require.GreaterOrEqual(t, lostAt.Sub(asked), 300*time.Millisecond)
			short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
			require.ErrorIs(t, h.lock(short), k.reentry, "re-entry after the bound")
			cancel()
			require.ErrorIs(t, h.unlock(ctx), zklock.ErrLockLost)
			require.NoError(t, rival.unlock(ctx))
			requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
		})
	}
}

// WithRevocable on every lock: a revocation request reaches the holder,
// the waiter behind never takes it for a release, and holds once the
// holder lets go.
func TestPairsRevocable(t *testing.T) {
	t.Parallel()
	c := shared(t)
	for _, k := range lockKinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := ctxFor(t)
			path := lockPath(t, "lock")
			s := newSession(t, c.Servers())
			h := k.ours(t, s, path, zklock.WithRevocable(func() {}))
			require.NoError(t, h.lock(ctx))
			rs := newSession(t, c.Servers())
			rival := k.rival(t, rs, path)
			got := rivalWaits(ctx, t, c, rs, rival, h.node())
			nodes, err := zklock.Revoke(ctx, newSession(t, c.Servers()), path)
			require.NoError(t, err)
			require.Equal(t, []string{h.node()}, nodes)
			select {
			case <-h.revoked():
			case <-ctx.Done():
				t.Fatal("the revocable holder was not told")
			}
			eventually(t, 10*time.Second, "the rival watches our node again", func() bool {
				return watches(t, c, rs.Client().SessionID(), h.node())
			})
			select {
			case r := <-got:
				t.Fatalf("the rival returned (%v) while the revoked holder holds", r.err)
			default:
			}
			require.False(t, closed(h.lost()))
			require.NoError(t, h.unlock(ctx))
			require.NoError(t, (<-got).err)
			require.NoError(t, rival.unlock(ctx))
			requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
		})
	}
}

// Break (force) on every lock, and on the options that keep a watch on the
// hold: the next contender holds; the broken holder's Guard fails and its
// Token is below the new holder's (it is not told: its Lost stays open, a
// documented limit); a bound that passes later deletes only the broken
// holder's node, never the new holder's.
func TestPairsBreak(t *testing.T) {
	t.Parallel()
	c := shared(t)
	kinds := append(lockKinds[:len(lockKinds):len(lockKinds)],
		lockKind{"Mutex WithMaxHold", func(t *testing.T, s *zklock.Session, p string, _ ...zklock.Option) lockHolder {
			return mutexHolder(t, s, p, zklock.WithMaxHold(2*time.Second))
		}, plainRival(mutexHolder), nil},
		lockKind{"RWMutex write WithRevocable", func(t *testing.T, s *zklock.Session, p string, _ ...zklock.Option) lockHolder {
			return writeHolder(t, s, p, zklock.WithRevocable(func() {}))
		}, plainRival(writeHolder), nil})
	for _, k := range kinds {
		t.Run(k.name, func(t *testing.T) {
			ctx := ctxFor(t)
			path := lockPath(t, "lock")
			s := newSession(t, c.Servers())
			h := k.ours(t, s, path)
			require.NoError(t, h.lock(ctx))
			guard := h.guard()
			rs := newSession(t, c.Servers())
			rival := k.rival(t, rs, path)
			got := rivalWaits(ctx, t, c, rs, rival, h.node())
			broken, err := zklock.Break(ctx, newSession(t, c.Servers()), path, true)
			require.NoError(t, err)
			require.Len(t, broken, 1)
			require.Equal(t, h.node(), broken[0].Path)
			require.NoError(t, (<-got).err, "the next contender holds")
			require.Greater(t, rival.token(), h.token())
			_, err = s.Client().Multi(ctx, guard, &zk.SetDataOp{Path: path, Data: []byte("stale"), Version: -1})
			require.ErrorIs(t, err, zk.ErrNoNode, "the broken holder's Guard")
			if k.name == "Mutex WithMaxHold" {
				<-h.lost() // the bound passes: its release must not touch the new holder
				require.True(t, exists(t, rs, rival.node()))
			}
			if err := h.unlock(ctx); err != nil {
				require.ErrorIs(t, err, zklock.ErrLockLost)
			}
			require.True(t, exists(t, rs, rival.node()), "the broken holder's Unlock left the new holder alone")
			require.NoError(t, rival.unlock(ctx))
			requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
		})
	}
	t.Run("Election", func(t *testing.T) {
		ctx := ctxFor(t)
		path := lockPath(t, "election")
		e, err := zklock.NewElection(newSession(t, c.Servers()), path)
		require.NoError(t, err)
		term, err := e.Campaign(ctx, nil)
		require.NoError(t, err)
		next, err := zklock.NewElection(newSession(t, c.Servers()), path)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() { _, err := next.Campaign(ctx, nil); got <- err }()
		waitCandidates(t, e, 2)
		_, err = zklock.Break(ctx, newSession(t, c.Servers()), path, true)
		require.NoError(t, err)
		require.NoError(t, <-got)
		select {
		case <-term.Lost(): // the term's watch on its node ends it
		case <-ctx.Done():
			t.Fatal("the broken leader's term did not end")
		}
		require.ErrorIs(t, e.Resign(ctx), zklock.ErrLockLost)
		require.NoError(t, next.Resign(ctx))
	})
	for _, layout := range semLayouts {
		t.Run(layout.name, func(t *testing.T) {
			ctx := ctxFor(t)
			path := lockPath(t, "sem")
			sem, err := zklock.NewSemaphore(newSession(t, c.Servers()), path, 1, layout.opts...)
			require.NoError(t, err)
			l, err := sem.Acquire(ctx, 1)
			require.NoError(t, err)
			_, err = zklock.Break(ctx, newSession(t, c.Servers()), path, true)
			require.ErrorIs(t, err, zklock.ErrNotLocked, "Break names no holder of a semaphore")
			require.True(t, exists(t, newSession(t, c.Servers()), zklock.NodeOf(l)))
			require.NoError(t, l.Release(ctx))
		})
	}
}

// waitCandidates waits until the election has n candidates.
func waitCandidates(t *testing.T, e *zklock.Election, n int) {
	t.Helper()
	eventually(t, 10*time.Second, "candidates", func() bool {
		cs, err := zklock.ContendersOf(ctxFor(t), e)
		return err == nil && len(cs) == n
	})
}

// Revoke aimed where nobody can hear it: refused on a node that announces
// its release and on a semaphore's lease (Curator's layout and the queue
// layout), nothing to name on a semaphore's path; written into an election
// candidate's node and a cohort's node, where it lets nobody in.
func TestPairsRevokeTargets(t *testing.T) {
	t.Parallel()
	c := shared(t)
	op := newSession(t, c.Servers())
	for _, layout := range semLayouts {
		t.Run(layout.name, func(t *testing.T) {
			ctx := ctxFor(t)
			path := lockPath(t, "sem")
			sem, err := zklock.NewSemaphore(newSession(t, c.Servers()), path, 2, layout.opts...)
			require.NoError(t, err)
			l, err := sem.Acquire(ctx, 1)
			require.NoError(t, err)
			_, err = zklock.Revoke(ctx, op, zklock.NodeOf(l))
			require.ErrorIs(t, err, zklock.ErrNotRevocable)
			_, err = zklock.Revoke(ctx, op, path)
			require.ErrorIs(t, err, zklock.ErrNotLocked)
			require.NoError(t, l.Release(ctx))
		})
	}
	t.Run("Election", func(t *testing.T) {
		ctx := ctxFor(t)
		path := lockPath(t, "election")
		e, err := zklock.NewElection(newSession(t, c.Servers()), path)
		require.NoError(t, err)
		term, err := e.Campaign(ctx, []byte("leader"))
		require.NoError(t, err)
		ns := newSession(t, c.Servers())
		next, err := zklock.NewElection(ns, path)
		require.NoError(t, err)
		got := make(chan error, 1)
		go func() { _, err := next.Campaign(ctx, nil); got <- err }()
		eventually(t, 10*time.Second, "the next candidate waits", func() bool {
			return watches(t, c, ns.Client().SessionID(), zklock.NodeOf(term))
		})
		nodes, err := zklock.Revoke(ctx, op, path)
		require.NoError(t, err)
		require.Equal(t, []string{zklock.NodeOf(term)}, nodes)
		eventually(t, 10*time.Second, "the next candidate watches the leader again", func() bool {
			return watches(t, c, ns.Client().SessionID(), zklock.NodeOf(term))
		})
		select {
		case err := <-got:
			t.Fatalf("the next candidate returned (%v) while the leader leads", err)
		default:
		}
		require.Nil(t, term.Err(), "a candidate is not told of a revocation")
		require.NoError(t, e.Resign(ctx))
		require.NoError(t, <-got)
		require.NoError(t, next.Resign(ctx))
	})
	t.Run("cohort", func(t *testing.T) { revokeCohort(t, c, op) })
}

// revokeCohort: a revocation written into a cohort's node is heard by
// nobody and lets nobody in; the Guard its holder took before fails, and
// the next handoff, whose guard bump fails, releases the node instead: the
// remote waiter holds next, and the local one after it.
func revokeCohort(t *testing.T, c server, op *zklock.Session) {
	ctx := ctxFor(t)
	path := lockPath(t, "cohort")
	s := newSession(t, c.Servers())
	a, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	b, err := zklock.NewMutex(s, path, zklock.WithCohort(0, time.Hour))
	require.NoError(t, err)
	require.NoError(t, a.Lock(ctx))
	guard, node := a.Guard(), zklock.NodeOf(a)
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(ctx) }()
	eventually(t, 10*time.Second, "b waits in the cohort", func() bool { return zklock.CohortWaiters(s, path) == 1 })
	rs := newSession(t, c.Servers())
	r, err := zklock.NewMutex(rs, path)
	require.NoError(t, err)
	rgot := make(chan error, 1)
	go func() { rgot <- r.Lock(ctx) }()
	eventually(t, 10*time.Second, "r waits for the cohort's node", func() bool { return watches(t, c, rs.Client().SessionID(), node) })
	nodes, err := zklock.Revoke(ctx, op, path)
	require.NoError(t, err)
	require.Equal(t, []string{node}, nodes)
	eventually(t, 10*time.Second, "r watches the cohort's node again", func() bool { return watches(t, c, rs.Client().SessionID(), node) })
	select {
	case err := <-rgot:
		t.Fatalf("r returned (%v) while the cohort holds", err)
	default:
	}
	_, err = s.Client().Multi(ctx, guard, &zk.SetDataOp{Path: path, Data: []byte("x"), Version: -1})
	require.ErrorIs(t, err, zk.ErrBadVersion, "the Guard taken before the revocation's write")
	require.NoError(t, a.Unlock(ctx)) // the bump fails: the node is released
	require.NoError(t, <-rgot)
	select {
	case err := <-bgot:
		t.Fatalf("b returned (%v) while r holds", err)
	default:
	}
	rtoken := r.Token()
	require.NoError(t, r.Unlock(ctx))
	require.NoError(t, <-bgot)
	require.Greater(t, b.Token(), rtoken)
	require.NoError(t, b.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), path, false)
}

// A MultiLock of every kind of part and of parts with options: each part
// excludes its rivals while the MultiLock holds (a reader part only
// writers), a revocable part hears a revocation through its handle,
// every part's Guard commits, and nothing is left once it lets go.
func TestPairsMultiLockParts(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "multi")
	s := newSession(t, c.Servers())
	re, err := zklock.NewReentrantMutex(s, root+"/a")
	require.NoError(t, err)
	rd, err := zklock.NewRWMutex(s, root+"/b")
	require.NoError(t, err)
	sq, err := zklock.NewSemaphore(s, root+"/c", 1, zklock.WithPermitLayout())
	require.NoError(t, err)
	co, err := zklock.NewMutex(s, root+"/d", zklock.WithCohort(0, 0))
	require.NoError(t, err)
	rv, err := zklock.NewMutex(s, root+"/e", zklock.WithRevocable(func() {}))
	require.NoError(t, err)
	bd, err := zklock.NewMutex(s, root+"/f", zklock.WithMaxHold(time.Hour))
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(bd, rv, co, sq, rd.ReadPart(), re)
	require.NoError(t, err)
	require.NoError(t, ml.Lock(ctx))

	rs := newSession(t, c.Servers())
	excluded := map[string]func() error{
		"/a": func() error {
			m, err := zklock.NewReentrantMutex(rs, root+"/a")
			require.NoError(t, err)
			return m.TryLock(ctx)
		},
		"/b": func() error {
			m, err := zklock.NewRWMutex(rs, root+"/b")
			require.NoError(t, err)
			return m.TryLock(ctx)
		},
		"/c": func() error {
			sem, err := zklock.NewSemaphore(rs, root+"/c", 1, zklock.WithPermitLayout())
			require.NoError(t, err)
			_, err = sem.TryAcquire(ctx, 1)
			return err
		},
		"/d": func() error { m, err := zklock.NewMutex(rs, root+"/d"); require.NoError(t, err); return m.TryLock(ctx) },
		"/e": func() error { m, err := zklock.NewMutex(rs, root+"/e"); require.NoError(t, err); return m.TryLock(ctx) },
		"/f": func() error { m, err := zklock.NewMutex(rs, root+"/f"); require.NoError(t, err); return m.TryLock(ctx) },
	}
	for p, try := range excluded {
		err := try()
		require.Error(t, err, "a rival got %s while the MultiLock holds it", p)
		require.True(t, errorsIsAny(err, zklock.ErrLocked, zklock.ErrLocked), "%s: %v", p, err)
	}
	reader, err := zklock.NewRWMutex(rs, root+"/b")
	require.NoError(t, err)
	require.NoError(t, reader.TryRLock(ctx), "a reader part excludes only writers")
	require.NoError(t, reader.RUnlock(ctx))

	_, err = zklock.Revoke(ctx, rs, root+"/e")
	require.NoError(t, err)
	select {
	case <-zklock.RevokedOf(rv):
	case <-ctx.Done():
		t.Fatal("the revocable part's handle was not told")
	}
	_, err = s.Client().Multi(ctx, append(ml.Guard(), &zk.SetDataOp{Path: root, Data: []byte("x"), Version: -1})...)
	require.NoError(t, err)
	require.False(t, closed(ml.Lost()))
	require.NoError(t, ml.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), root, false)
	for p, try := range excluded {
		require.NoError(t, try(), "%s once the MultiLock let go", p)
	}
}

func errorsIsAny(err error, targets ...error) bool {
	for _, t := range targets {
		if errors.Is(err, t) {
			return true
		}
	}
	return false
}

// A MultiLock part whose bound (WithMaxHold) passes while the MultiLock
// holds: the MultiLock's Lost fires before a rival of that part holds, and
// Unlock reports the loss while it releases the rest.
func TestPairsMultiLockBoundedPart(t *testing.T) {
	c := shared(t)
	ctx := ctxFor(t)
	root := lockPath(t, "multi")
	s := newSession(t, c.Servers())
	x, err := zklock.NewMutex(s, root+"/x", zklock.WithMaxHold(500*time.Millisecond))
	require.NoError(t, err)
	y, err := zklock.NewMutex(s, root+"/y")
	require.NoError(t, err)
	ml, err := zklock.NewMultiLock(x, y)
	require.NoError(t, err)
	require.NoError(t, ml.Lock(ctx))
	rival, err := zklock.NewMutex(newSession(t, c.Servers()), root+"/x")
	require.NoError(t, err)
	lossBeforeRival(ctx, t, ml.Lost(), rival, nil)
	require.ErrorIs(t, ml.Unlock(ctx), zklock.ErrLockLost)
	require.NoError(t, rival.Unlock(ctx))
	requireNoEphemerals(t, c, s.Client().SessionID(), root, false)
}

// ReentrantMutex owners of one session in a cohort, with a remote owner:
// nested holds never overlap across owners, and tokens strictly increase
// in grant order across local handoffs and remote grants.
func TestPairsReentrantCohort(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "cohort")
	local := newSession(t, c.Servers())
	g := &grantLog{}
	run := func(r *zklock.ReentrantMutex, who string, n int) error {
		for range n {
			if err := r.Lock(ctx); err != nil {
				return fmt.Errorf("%s: %w", who, err)
			}
			if err := r.Lock(ctx); err != nil { // nested: counts only
				return fmt.Errorf("%s: nested: %w", who, err)
			}
			g.enter(who, r.Token())
			time.Sleep(100 * time.Microsecond) // a critical section others could overlap
			g.exit()
			for range 2 {
				if err := r.Unlock(ctx); err != nil {
					return fmt.Errorf("%s: Unlock: %w", who, err)
				}
			}
		}
		return nil
	}
	errs := make(chan error, 5)
	for i := range 4 {
		r, err := zklock.NewReentrantMutex(local, path, zklock.WithCohort(4, time.Hour))
		require.NoError(t, err)
		go func() { errs <- run(r, fmt.Sprintf("local-%d", i), 20) }()
	}
	remote, err := zklock.NewReentrantMutex(newSession(t, c.Servers()), path)
	require.NoError(t, err)
	go func() { errs <- run(remote, "remote", 10) }()
	for range 5 {
		require.NoError(t, <-errs)
	}
	require.Zero(t, g.overlap, "holders overlapped")
	for i := 1; i < len(g.tokens); i++ {
		require.Greater(t, g.tokens[i], g.tokens[i-1], "token of grant %d (%s) after %s", i, g.who[i], g.who[i-1])
	}
	requireNoEphemerals(t, c, local.Client().SessionID(), path, false)
}

// Break of a holder that downgraded: its write node and the read node
// beside it (the same place in the queue) are both its holds, so Break
// deletes both, and the writer behind holds; the old holder's releases
// then report nothing held by it any more.
func TestBreakDowngradedHolder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "rw")
	as := newSession(t, c.Servers())
	a := newRW(t, as, path)
	require.NoError(t, a.Lock(ctx))
	require.NoError(t, a.Downgrade(ctx))
	bs := newSession(t, c.Servers())
	b := newRW(t, bs, path)
	bgot := make(chan error, 1)
	go func() { bgot <- b.Lock(ctx) }()
	waitQueued(t, b, 3)
	broken, err := zklock.Break(ctx, newSession(t, c.Servers()), path, true)
	require.NoError(t, err)
	var kinds []zklock.Kind
	for _, h := range broken {
		kinds = append(kinds, h.Kind)
	}
	require.Equal(t, []zklock.Kind{zklock.KindRWMutexWrite, zklock.KindRWMutexRead}, kinds, "the downgraded holder's two nodes")
	require.NoError(t, <-bgot, "the writer behind holds")
	require.NoError(t, a.Unlock(ctx))
	require.NoError(t, a.RUnlock(ctx))
	requireNoEphemerals(t, c, as.Client().SessionID(), path, false)
	require.NoError(t, b.Unlock(ctx))
}
