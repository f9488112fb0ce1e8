package zklock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Issue 48's review: attacks on the claims of the smaller root package,
// as a user meets them (go doc, README, docs/api.md, CHANGELOG). The one
// kept open longest, go doc of a root type in one screen, is
// TestGoDocOneScreen (godoc_screen_test.go).

// guardWrites runs the documented composition, a hold's guard first in
// zk.Client.Multi and one write after it, and returns Multi's error.
func guardWrites(ctx context.Context, s *zklock.Session, data string, value string, guard ...zk.Op) error {
	ops := append(append([]zk.Op{}, guard...), &zk.SetDataOp{Path: data, Data: []byte(value), Version: -1})
	_, err := s.Client().Multi(ctx, ops...)
	return err
}

// dataNode creates a persistent node for a test's guarded writes.
func dataNode(ctx context.Context, t *testing.T, s *zklock.Session) string {
	t.Helper()
	p := lockPath(t, "data")
	c := s.Client()
	// Parents first: Create makes no parents.
	for _, q := range []string{"/zklock-test", lockPath(t, "")[:len(lockPath(t, ""))-1], p} {
		if _, err := c.Create(ctx, q, nil, zk.ModePersistent); err != nil && !errors.Is(err, zk.ErrNodeExists) {
			t.Fatalf("Create %s: %v", q, err)
		}
	}
	return p
}

// readData returns the data node's value.
func readData(ctx context.Context, t *testing.T, s *zklock.Session, p string) string {
	t.Helper()
	d, _, err := s.Client().Get(ctx, p)
	if err != nil {
		t.Fatalf("Get %s: %v", p, err)
	}
	return string(d)
}

// TestReviewBreak_GuardComposes: every primitive's Guard, first in
// s.Client().Multi, lets the write commit while held, and after the release
// the same guard (taken while held) makes the same Multi fail with
// zk.ErrNoNode, writing nothing.
func TestReviewBreak_GuardComposes(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)

	type hold struct {
		guard   func() []zk.Op
		release func() error
	}
	// As a caller composes it: Multi(ctx, m.Guard(), writes...), a nil
	// *zk.CheckOp included.
	one := func(g *zk.CheckOp) []zk.Op { return []zk.Op{g} }
	// none reports a guard of nothing held: no op, or only nil checks.
	none := func(g []zk.Op) bool {
		for _, op := range g {
			if c, ok := op.(*zk.CheckOp); !ok || c != nil {
				return false
			}
		}
		return true
	}
	cases := []struct {
		name    string
		acquire func(t *testing.T) hold
	}{
		{"Mutex", func(t *testing.T) hold {
			m, err := zklock.NewMutex(s, lockPath(t, "m"))
			if err == nil {
				err = m.Lock(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			return hold{func() []zk.Op { return one(m.Guard()) }, func() error { return m.Unlock(ctx) }}
		}},
		{"ReentrantMutex", func(t *testing.T) hold {
			m, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
			if err == nil {
				err = m.Lock(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			return hold{func() []zk.Op { return one(m.Guard()) }, func() error { return m.Unlock(ctx) }}
		}},
		{"RWMutexWrite", func(t *testing.T) hold {
			m, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
			if err == nil {
				err = m.Lock(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			return hold{func() []zk.Op { return one(m.Guard()) }, func() error { return m.Unlock(ctx) }}
		}},
		{"RWMutexRead", func(t *testing.T) hold {
			m, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
			if err == nil {
				err = m.RLock(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			return hold{func() []zk.Op { return one(m.Guard()) }, func() error { return m.RUnlock(ctx) }}
		}},
		{"Lease", func(t *testing.T) hold {
			sem, err := zklock.NewSemaphore(s, lockPath(t, "sem"), 2)
			if err != nil {
				t.Fatal(err)
			}
			l, err := sem.Acquire(ctx, 1)
			if err != nil {
				t.Fatal(err)
			}
			return hold{func() []zk.Op { return l.Guard() }, func() error { return l.Release(ctx) }}
		}},
		{"Term", func(t *testing.T) hold {
			e, err := zklock.NewElection(s, lockPath(t, "e"))
			if err != nil {
				t.Fatal(err)
			}
			term, err := e.Campaign(ctx, []byte("me"))
			if err != nil {
				t.Fatal(err)
			}
			return hold{func() []zk.Op { return one(term.Guard()) }, func() error { return e.Resign(ctx) }}
		}},
		{"MultiLock", func(t *testing.T) hold {
			m, err := zklock.NewMutex(s, lockPath(t, "a"))
			if err != nil {
				t.Fatal(err)
			}
			rw, err := zklock.NewRWMutex(s, lockPath(t, "b"))
			if err != nil {
				t.Fatal(err)
			}
			sem, err := zklock.NewSemaphore(s, lockPath(t, "c"), 1)
			if err != nil {
				t.Fatal(err)
			}
			ml, err := zklock.NewMultiLock(m, rw.ReadPart(), sem)
			if err == nil {
				err = ml.Lock(ctx)
			}
			if err != nil {
				t.Fatal(err)
			}
			return hold{ml.Guard, func() error { return ml.Unlock(ctx) }}
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			h := tc.acquire(t)
			g := h.guard()
			if none(g) {
				t.Fatal("Guard is nil while held")
			}
			if tc.name == "MultiLock" && len(g) != 3 {
				t.Fatalf("MultiLock.Guard has %d checks for 3 parts", len(g))
			}
			if err := guardWrites(ctx, s, data, tc.name+" held", g...); err != nil {
				t.Fatalf("guarded write while held: %v", err)
			}
			if got := readData(ctx, t, s, data); got != tc.name+" held" {
				t.Fatalf("data after the guarded write: %q", got)
			}
			if err := h.release(); err != nil {
				t.Fatalf("release: %v", err)
			}
			// A Term is one term: after Resign its Guard still names its
			// node (Term.Guard's doc), whose check fails; the data checks
			// below see any write that committed under it.
			after := h.guard()
			if !none(after) && tc.name != "Term" {
				t.Errorf("Guard after the release is %v, documented nil (one nil check for a MultiLock or Lease)", after)
			}
			// Composed as documented, the guard of nothing held lets no write
			// commit (an empty one would send the write alone).
			if err := guardWrites(ctx, s, data, tc.name+" unguarded", after...); err == nil && tc.name != "Term" {
				t.Errorf("a write guarded by the Guard of nothing held (%v) committed", after)
			}
			err := guardWrites(ctx, s, data, tc.name+" stale", g...)
			if !errors.Is(err, zk.ErrNoNode) {
				t.Fatalf("guarded write after the release: %v, want zk.ErrNoNode", err)
			}
			if got := readData(ctx, t, s, data); got != tc.name+" held" {
				t.Fatalf("a stale guard's write committed: data %q", got)
			}
		})
	}
}

// TestReviewBreak_GuardCohortHandoff: with WithCohort, the guard the first
// local holder took fails with zk.ErrBadVersion once the lock was handed to
// a local waiter, and the new holder's guard writes (Mutex and
// ReentrantMutex).
func TestReviewBreak_GuardCohortHandoff(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)

	type locker interface {
		Lock(context.Context) error
		Unlock(context.Context) error
		Guard() *zk.CheckOp
	}
	mk := map[string]func(p string) (locker, error){
		"Mutex": func(p string) (locker, error) {
			return zklock.NewMutex(s, p, zklock.WithCohort(8, 10*time.Second))
		},
		"ReentrantMutex": func(p string) (locker, error) {
			return zklock.NewReentrantMutex(s, p, zklock.WithCohort(8, 10*time.Second))
		},
	}
	for name, newLock := range mk {
		t.Run(name, func(t *testing.T) {
			p := lockPath(t, "cohort")
			a, err := newLock(p)
			if err != nil {
				t.Fatal(err)
			}
			b, err := newLock(p)
			if err != nil {
				t.Fatal(err)
			}
			// A local handoff needs b queued in the cohort before a's
			// Unlock, which nothing public shows; so each round gives b's
			// Lock a longer head start and tells the two outcomes apart by
			// the node b holds (the same node: a local handoff). Every
			// round must refuse the stale guard; at least one must be local.
			local := 0
			for round := 0; round < 6 && local == 0; round++ {
				if err := a.Lock(ctx); err != nil {
					t.Fatal(err)
				}
				stale := a.Guard()
				if err := guardWrites(ctx, s, data, name+" a", stale); err != nil {
					t.Fatalf("a's guarded write while a holds: %v", err)
				}
				granted := make(chan error, 1)
				go func() { granted <- b.Lock(ctx) }()
				time.Sleep(time.Duration(10<<round) * time.Millisecond) // b's head start, see above
				if err := a.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
				if err := <-granted; err != nil {
					t.Fatalf("b.Lock: %v", err)
				}
				fresh := b.Guard()
				want := zk.ErrNoNode
				if fresh.Path == stale.Path {
					local++
					want = zk.ErrBadVersion
				}
				err = guardWrites(ctx, s, data, name+" stale a", stale)
				if !errors.Is(err, want) {
					t.Fatalf("round %d: a's stale guard after b holds (local handoff %v): %v, want %v",
						round, fresh.Path == stale.Path, err, want)
				}
				if err := guardWrites(ctx, s, data, name+" b", fresh); err != nil {
					t.Fatalf("b's guarded write while b holds: %v", err)
				}
				if got := readData(ctx, t, s, data); got != name+" b" {
					t.Fatalf("data: %q", got)
				}
				if err := b.Unlock(ctx); err != nil {
					t.Fatal(err)
				}
			}
			if local == 0 {
				t.Fatal("no round handed the lock over locally")
			}
		})
	}
}

// wrapDeep wraps err as callers do, three levels deep, with both %w forms.
func wrapDeep(err error) error {
	return fmt.Errorf("app: %w", errors.Join(errors.New("context"), fmt.Errorf("job 7: %w", fmt.Errorf("step: %w", err))))
}

// TestReviewBreak_SentinelsEveryPath: each root sentinel, on each path
// errors.go documents for it that a test can reach on one server, matches
// with errors.Is, and stays matched (and errors.As finds the error types)
// under a caller's deep wrapping; a refusal matches no other class.
func TestReviewBreak_SentinelsEveryPath(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	all := []error{zklock.ErrInvalidArgument, zklock.ErrWrongKind, zklock.ErrTimingUnknown, zklock.ErrNotRevocable,
		zklock.ErrLocked, zklock.ErrHolderAlive, zklock.ErrLockLost, zklock.ErrResigned, zklock.ErrSessionClosed,
		zklock.ErrNotLocked, zklock.ErrAlreadyLocked, zklock.ErrNotOwner}
	check := func(what string, err error, want error) {
		t.Helper()
		for _, e := range []error{err, wrapDeep(err)} {
			if !errors.Is(e, want) {
				t.Errorf("%s: %v, not errors.Is %v", what, e, want)
				return
			}
			for _, other := range all {
				if other != want && errors.Is(e, other) {
					t.Errorf("%s: %v is also %v", what, e, other)
				}
			}
		}
	}
	var nilCtx context.Context

	// Fix the call.
	_, err := zklock.NewMutex(s, "relative/path")
	check("NewMutex relative path", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewMutex(s, "/a/")
	check("NewMutex trailing slash", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewMutex(s, "/zookeeper/x")
	check("NewMutex under /zookeeper", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewMutex(nil, lockPath(t, "m"))
	check("NewMutex nil Session", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewMutex(s, lockPath(t, "m"), zklock.WithData(make([]byte, zk.MaxDataSize+1)))
	check("WithData over MaxDataSize", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewSemaphore(s, lockPath(t, "sem0"), 0)
	check("NewSemaphore limit 0", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewSession(ctx, zklock.WithServers())
	check("NewSession empty server list", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewSession(ctx, zklock.WithServers(srv.Servers()...), zklock.WithSessionTimeout(-time.Second))
	check("NewSession negative timeout", err, zklock.ErrInvalidArgument)
	_, err = zklock.NewMutex(s, lockPath(t, "m"), zklock.WithCohort(1, 0), zklock.WithMaxHold(time.Second))
	check("WithCohort with WithMaxHold", err, zklock.ErrInvalidArgument)
	m, err := zklock.NewMutex(s, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	check("Mutex.Lock nil ctx", m.Lock(nilCtx), zklock.ErrInvalidArgument) //nolint:staticcheck // the nil context is the attack
	sem, err := zklock.NewSemaphore(s, lockPath(t, "sem"), 2)
	if err != nil {
		t.Fatal(err)
	}
	_, err = sem.Acquire(ctx, 3)
	check("Acquire over the limit", err, zklock.ErrInvalidArgument)
	_, err = sem.TryAcquire(ctx, 0)
	check("TryAcquire 0", err, zklock.ErrInvalidArgument)
	l1, err := sem.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	semOther, err := zklock.NewSemaphore(s2, lockPath(t, "sem"), 3)
	if err != nil {
		t.Fatal(err)
	}
	_, err = semOther.TryAcquire(ctx, 1)
	check("TryAcquire with another limit", err, zklock.ErrInvalidArgument)
	e, err := zklock.NewElection(s, lockPath(t, "e"))
	if err != nil {
		t.Fatal(err)
	}
	check("Election.Run nil fn", e.Run(ctx, nil, nil), zklock.ErrInvalidArgument)

	// Wrong kind, through errors.As from deep wrapping.
	rw, err := zklock.NewRWMutex(s2, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	err = rw.TryLock(ctx)
	check("RWMutex on a Mutex's path", err, zklock.ErrWrongKind)
	var wk *zklock.WrongKindError
	if !errors.As(wrapDeep(err), &wk) || wk.Found != zklock.KindMutex || wk.Path != lockPath(t, "m") {
		t.Errorf("errors.As *WrongKindError from %v: %+v", err, wk)
	}

	// Wait or retry.
	m2, err := zklock.NewMutex(s2, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	err = m2.TryLock(ctx)
	check("TryLock of a held Mutex", err, zklock.ErrLocked)
	var le *zklock.LockedError
	if !errors.As(wrapDeep(err), &le) || le.Session != s.Client().SessionID() || le.Holder == "" || le.Holders != nil {
		t.Errorf("errors.As *LockedError from TryLock's %v: %+v (want the holder's session 0x%x)", err, le, s.Client().SessionID())
	}
	_, err = semOther.TryAcquire(ctx, 1) // still the other limit: fix-the-call wins
	check("TryAcquire mismatch while held", err, zklock.ErrInvalidArgument)
	_, err = sem.TryAcquire(ctx, 2)
	check("TryAcquire of a full semaphore", err, zklock.ErrLocked)
	_, err = zklock.Break(ctx, s2, lockPath(t, "m"), false)
	check("Break without force", err, zklock.ErrHolderAlive)
	le = nil
	if !errors.As(wrapDeep(err), &le) || len(le.Holders) != 1 || le.Holders[0].Session != s.Client().SessionID() {
		t.Errorf("errors.As *LockedError from Break's %v: %+v", err, le)
	}
	_, err = zklock.Revoke(ctx, s2, lockPath(t, "m"))
	check("Revoke of a holder not revocable", err, zklock.ErrNotRevocable)

	// The hold is gone.
	if _, err := zklock.Break(ctx, s2, lockPath(t, "m"), true); err != nil {
		t.Fatal(err)
	}
	// A plain Mutex is not told of a Break (Break's doc): its Unlock may
	// return nil. The documented ErrLockLost paths: a bound that passed.
	if err := m.Unlock(ctx); err != nil {
		t.Logf("Unlock after Break: %v", err)
	}
	mh, err := zklock.NewMutex(s, lockPath(t, "mh"), zklock.WithMaxHold(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := mh.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	select {
	case <-mh.Lost():
	case <-ctx.Done():
		t.Fatal("WithMaxHold's bound never fired Lost")
	}
	check("Unlock after the max hold", mh.Unlock(ctx), zklock.ErrLockLost)
	if _, err := zklock.Break(ctx, s2, lockPath(t, "sem"), true); err == nil {
		t.Log("Break of a semaphore's path deleted something")
	}
	term, err := e.Campaign(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	check("Term.Err after Resign", term.Err(), zklock.ErrResigned)

	// Misuse.
	check("second Unlock", m.Unlock(ctx), zklock.ErrNotLocked)
	check("Resign when not leading", e.Resign(ctx), zklock.ErrNotLocked)
	_, err = zklock.Break(ctx, s, lockPath(t, "nobody"), true)
	check("Break where nobody holds", err, zklock.ErrNotLocked)
	_, err = zklock.Revoke(ctx, s, lockPath(t, "nobody"))
	check("Revoke where nobody holds", err, zklock.ErrNotLocked)
	if err := l1.Release(ctx); err != nil {
		t.Fatal(err)
	}
	check("second Release", l1.Release(ctx), zklock.ErrNotLocked)
	ml, err := zklock.NewMultiLock(m)
	if err != nil {
		t.Fatal(err)
	}
	if err := ml.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	check("MultiLock.Lock while held", ml.Lock(ctx), zklock.ErrAlreadyLocked)
	if err := ml.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
	if _, err := e.Campaign(ctx, nil); err != nil {
		t.Fatal(err)
	}
	_, err = e.Campaign(ctx, nil)
	check("Campaign while leading", err, zklock.ErrAlreadyLocked)

	// Session closed: the root's and zk's are one value.
	if zk.ErrSessionClosed != zklock.ErrSessionClosed {
		t.Error("zk.ErrSessionClosed is not zklock.ErrSessionClosed")
	}
	s3 := newSession(t, srv.Servers())
	m3, err := zklock.NewMutex(s3, lockPath(t, "m3"))
	if err != nil {
		t.Fatal(err)
	}
	if err := s3.Close(); err != nil {
		t.Fatal(err)
	}
	check("Lock on a closed Session", m3.Lock(ctx), zklock.ErrSessionClosed)
	_, _, err = s3.Client().Get(ctx, "/")
	check("zk Get on a closed Session", err, zk.ErrSessionClosed)
}

// TestReviewBreak_ZKErrorThroughRecipe: a recipe's error wraps ZooKeeper's
// code, so errors.Is finds zk's sentinel in it (the CHANGELOG's
// errors.Is(err, zk.ErrNoAuth)): a Mutex under a parent whose ACL lets
// nobody create fails with zk.ErrNoAuth.
func TestReviewBreak_ZKErrorThroughRecipe(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	parent := data + "-ro"
	if _, err := s.Client().Create(ctx, parent, nil, zk.ModePersistent, zk.WorldACL(zk.PermRead)...); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Client().Delete(context.Background(), parent, -1) })
	m, err := zklock.NewMutex(s, parent+"/lock")
	if err != nil {
		t.Fatal(err)
	}
	err = m.Lock(ctx)
	if !errors.Is(wrapDeep(err), zk.ErrNoAuth) {
		t.Fatalf("Lock under a read-only parent: %v, not errors.Is zk.ErrNoAuth", err)
	}
	_, err = zklock.Contenders(ctx, s, data+"/none/such")
	t.Logf("Contenders of a missing path: %v", err)
}

// removedNames are the root package's exported names and methods at
// a1f70de (before issue 48) that are gone today, as the CHANGELOG's
// "Moved/removed" list says, each with the expression that used it; fields
// of moved types go with their types.
var removedNames = []struct{ name, use string }{}

func init() {
	for _, n := range strings.Fields(`ACL AuthACL CheckOp Client CreateMode CreateOp DefaultCohortHandoffs
		DefaultCohortHold DefaultMaxRequestSize DefaultSessionTimeout DeleteOp DigestACL ErrAlreadyCampaigning
		ErrAuthFailed ErrBadArguments ErrBadVersion ErrConnectionLoss ErrDataTooLarge ErrInvalidACL
		ErrInvalidOption ErrInvalidPath ErrLeadershipLost ErrLeaseLost ErrLeaseReleased ErrLimitMismatch
		ErrNilContext ErrNoAuth ErrNoChildrenForEphemerals ErrNoLeader ErrNoNode ErrNodeExists ErrNotAcquired
		ErrNotEmpty ErrNotLeader ErrRolledBack ErrSessionExpired ErrSessionMoved ErrUnimplemented Event
		HolderAliveError KindCuratorLeaderLatch KindKazooReadLock MaxDataSize ModeContainer ModeEphemeral
		ModeEphemeralSequential ModePersistent ModePersistentSequential NodeChildrenChanged NodeCreated
		NodeDataChanged NodeDeleted NodeEvent NodeEventType NodeWatchEnded Op OpResult PermAdmin PermAll
		PermCreate PermDelete PermRead PermWrite RecipeMetrics ReservedData RevokeMessage SetDataOp Stat State
		StateClosed StateConnected StateConnecting StateExpired StateLost StateReconnected StateSuspended Timing
		Watch WatchErrors WatchKind WatchOption WithDigestAuth WorldACL`) {
		removedNames = append(removedNames, struct{ name, use string }{n, "_ = zklock." + n})
	}
	for _, m := range strings.Fields(`Election.Candidates Election.Leader Lease.Node Lease.Nodes MultiLock.Nodes
		Mutex.Contenders Mutex.Locker Mutex.Node Mutex.Part Mutex.Revoked RWMutex.Contenders RWMutex.Locker
		RWMutex.Node RWMutex.RLocker RWMutex.Revoked RWMutex.WritePart ReentrantMutex.Contenders
		ReentrantMutex.HoldCount ReentrantMutex.Locker ReentrantMutex.Node ReentrantMutex.Part
		ReentrantMutex.Revoked Semaphore.Contenders Semaphore.Holders Semaphore.Part Session.Multi
		Session.Ownership Session.SessionID Session.State Session.Subscribe Session.Timeout Session.Timing
		Term.Context Term.Node Term.SessionID`) {
		ty, meth, _ := strings.Cut(m, ".")
		removedNames = append(removedNames, struct{ name, use string }{m, "_ = (*zklock." + ty + ")." + meth})
	}
	removedNames = append(removedNames, struct{ name, use string }{"LeaderInfo.Since", "_ = zklock.LeaderInfo{}.Since"})
}

// TestReviewBreak_RemovedNamesGone: every name that vanished from the root
// since a1f70de no longer compiles (each use is its own compile error,
// "undefined" or "has no field or method": not another error that would
// mean the name still exists), and the CHANGELOG's Unreleased section
// names each (a method by its name, a field by its name).
func TestReviewBreak_RemovedNamesGone(t *testing.T) {
	t.Parallel()
	var src strings.Builder
	src.WriteString("package main\n\nimport \"github.com/zklock/zklock\"\n\nfunc main() {\n")
	line := map[int]string{}
	for i, n := range removedNames {
		fmt.Fprintf(&src, "\t%s\n", n.use)
		line[6+i] = n.name
	}
	src.WriteString("}\n")
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe.go")
	if err := os.WriteFile(probe, []byte(src.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	virtual := filepath.Join(wd, "review48probe", "probe.go")
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{virtual: probe}})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("go", "build", "-gcflags=-e", "-overlay="+ov, "-o", os.DevNull, "./review48probe")
	out, err := cmd.CombinedOutput()
	if err == nil {
		t.Fatal("the probe of removed names compiled")
	}
	failed := map[int]string{}
	for _, l := range strings.Split(string(out), "\n") {
		_, rest, ok := strings.Cut(l, "probe.go:")
		if !ok {
			continue
		}
		var ln int
		if _, err := fmt.Sscanf(rest, "%d:", &ln); err != nil {
			continue
		}
		failed[ln] = l
	}
	if len(failed) == 0 {
		t.Fatalf("no compile error of the probe's; go build said:\n%s", out)
	}
	unrel := changelogUnreleased(t)
	for ln, name := range line {
		msg, ok := failed[ln]
		switch {
		case !ok:
			t.Errorf("%s still compiles", name)
		case !strings.Contains(msg, "undefined") && !strings.Contains(msg, "has no field or method"):
			t.Errorf("%s: not gone but %s", name, msg)
		}
		short := name[strings.LastIndex(name, ".")+1:]
		if !regexp.MustCompile(`\b` + short + `\b`).MatchString(unrel) {
			t.Errorf("%s: the CHANGELOG's Unreleased section does not name it", name)
		}
	}
	t.Logf("%d removed names checked, each a compile error", len(line))
}

// changelogUnreleased returns CHANGELOG.md's Unreleased section.
func changelogUnreleased(t *testing.T) string {
	t.Helper()
	b, err := os.ReadFile("CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	s := string(b)
	i := strings.Index(s, "## Unreleased")
	if i < 0 {
		t.Fatal("no Unreleased section in CHANGELOG.md")
	}
	s = s[i+len("## Unreleased"):]
	if j := strings.Index(s, "\n## "); j >= 0 {
		s = s[:j]
	}
	return s
}

// TestReviewBreak_GuardEdges: the guard in the cases between a plain hold
// and its release: a re-entered ReentrantMutex (held until the last
// Unlock), an RWMutex downgraded (the write guard dies with the write
// lock, the read guard then writes), a MultiLock one of whose parts was
// broken, and a returned guard changed by the caller (it must not change
// the handle's). Also ErrNotOwner, the one sentinel a second owner meets.
func TestReviewBreak_GuardEdges(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	write := func(v string, g ...zk.Op) error { return guardWrites(ctx, s, data, v, g...) }

	t.Run("ReentrantCount", func(t *testing.T) {
		r, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
		if err != nil {
			t.Fatal(err)
		}
		other, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
		if err != nil {
			t.Fatal(err)
		}
		for i := 0; i < 2; i++ {
			if err := r.Lock(ctx); err != nil {
				t.Fatal(err)
			}
		}
		g := r.Guard()
		if err := other.Unlock(ctx); !errors.Is(err, zklock.ErrNotOwner) {
			t.Errorf("another owner's Unlock: %v, want ErrNotOwner", err)
		}
		if err := r.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := write("count 1", r.Guard()); err != nil {
			t.Fatalf("guarded write at count 1: %v", err)
		}
		if err := r.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := write("count 0", g); !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("guarded write after the last Unlock: %v, want zk.ErrNoNode", err)
		}
	})
	t.Run("Downgrade", func(t *testing.T) {
		rw, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
		if err != nil {
			t.Fatal(err)
		}
		if err := rw.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		wg := rw.Guard()
		if err := rw.Downgrade(ctx); err != nil {
			t.Fatal(err)
		}
		if err := rw.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := write("stale write guard", wg); !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("the write lock's guard after Downgrade and Unlock: %v, want zk.ErrNoNode", err)
		}
		rg := rw.Guard()
		if rg == nil || rg.Path == wg.Path {
			t.Fatalf("Guard while the downgraded read lock holds: %+v (write guard %+v)", rg, wg)
		}
		if err := write("read guard", rg); err != nil {
			t.Fatalf("the read lock's guarded write: %v", err)
		}
		if err := rw.RUnlock(ctx); err != nil {
			t.Fatal(err)
		}
		if err := write("stale read guard", rg); !errors.Is(err, zk.ErrNoNode) {
			t.Fatalf("the read guard after RUnlock: %v, want zk.ErrNoNode", err)
		}
	})
	t.Run("MultiLockPartBroken", func(t *testing.T) {
		a, err := zklock.NewMutex(s, lockPath(t, "a"))
		if err != nil {
			t.Fatal(err)
		}
		b, err := zklock.NewMutex(s, lockPath(t, "b"))
		if err != nil {
			t.Fatal(err)
		}
		ml, err := zklock.NewMultiLock(a, b)
		if err != nil {
			t.Fatal(err)
		}
		if err := ml.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		if _, err := zklock.Break(ctx, s2, lockPath(t, "b"), true); err != nil {
			t.Fatal(err)
		}
		err = write("one part broken", ml.Guard()...)
		if !errors.Is(err, zk.ErrNoNode) || !strings.Contains(err.Error(), lockPath(t, "b")) {
			t.Fatalf("MultiLock's guard with part b broken: %v, want zk.ErrNoNode naming b's node", err)
		}
		_ = ml.Unlock(ctx) // b's release finds its node gone; what it returns is Break's business
	})
	t.Run("CallerChangesGuard", func(t *testing.T) {
		m, err := zklock.NewMutex(s, lockPath(t, "m"))
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		g := m.Guard()
		want := *g
		g.Path, g.Version = data, 12345
		if got := m.Guard(); got == nil || *got != want {
			t.Fatalf("Guard after the caller changed the returned one: %+v, want %+v", got, want)
		}
		if err := write("still mine", m.Guard()); err != nil {
			t.Fatalf("guarded write: %v", err)
		}
		if err := m.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	})
}

// TestReviewBreak_CohortGuardRacesHandoff: with WithCohort, one goroutine
// takes Guards over and over while another Unlocks the same handle and the
// lock goes to a local waiter (one handle, many goroutines): every guard
// the first goroutine got, the ones taken during the Unlock included, must
// fail once the waiter holds the handed-over node, with zk.ErrBadVersion.
func TestReviewBreak_CohortGuardRacesHandoff(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	p := lockPath(t, "cohort")
	a, err := zklock.NewMutex(s, p, zklock.WithCohort(4095, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	b, err := zklock.NewMutex(s, p, zklock.WithCohort(4095, time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	local, checked := 0, 0
	deadline := time.Now().Add(15 * time.Second)
	for round := 0; round < 40 && time.Now().Before(deadline); round++ {
		if err := a.Lock(ctx); err != nil {
			t.Fatal(err)
		}
		granted := make(chan error, 1)
		go func() { granted <- b.Lock(ctx) }()
		time.Sleep(time.Millisecond) // b's head start into the cohort's queue (the check below needs none)
		first := make(chan struct{})
		stop := make(chan struct{})
		got := make(chan []*zk.CheckOp, 1)
		go func() {
			var gs []*zk.CheckOp
			for i := 0; ; i++ {
				if g := a.Guard(); g != nil {
					gs = append(gs, g)
				}
				if i == 0 {
					close(first)
				}
				select {
				case <-stop:
					got <- gs
					return
				default:
				}
			}
		}()
		<-first
		err := a.Unlock(ctx)
		close(stop)
		gs := <-got
		if err != nil {
			t.Fatal(err)
		}
		if err := <-granted; err != nil {
			t.Fatal(err)
		}
		if len(gs) == 0 {
			t.Fatal("a.Guard was nil while a held")
		}
		fresh := b.Guard()
		want := zk.ErrNoNode
		if fresh.Path == gs[0].Path {
			local++
			want = zk.ErrBadVersion
		}
		seen := map[zk.CheckOp]bool{}
		for _, g := range gs {
			if seen[*g] {
				continue
			}
			seen[*g] = true
			checked++
			if err := guardWrites(ctx, s, data, "stale", g); !errors.Is(err, want) {
				t.Fatalf("round %d: a guard a's goroutine took (%d taken) writes or fails otherwise after b holds: %v, want %v",
					round, len(gs), err, want)
			}
		}
		if err := b.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	t.Logf("%d local handoffs, %d distinct stale guards refused", local, checked)
	if local == 0 {
		t.Fatal("no local handoff")
	}
}

// TestReviewBreak_NotZooKeeperFromRoot: NewSession, a root function,
// against a server that answers HTTP returns zk.ErrNotZooKeeper at once
// (its doc; the CHANGELOG's "at once"), long before its ctx ends, naming
// the address.
func TestReviewBreak_NotZooKeeperFromRoot(t *testing.T) {
	t.Parallel()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	// An HTTP port as Jetty (ZooKeeper's AdminServer) answers a binary
	// request: 400 at once, then the connection closes.
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c.SetDeadline(time.Now().Add(5 * time.Second))
			buf := make([]byte, 64)
			_, _ = c.Read(buf)
			_, _ = io.WriteString(c, "HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n")
			c.Close()
		}
	}()
	t.Cleanup(func() { ln.Close(); <-done })
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	began := time.Now()
	s, err := zklock.NewSession(ctx, zklock.WithServers(ln.Addr().String()))
	if err == nil {
		s.Close()
		t.Fatal("NewSession against an HTTP server succeeded")
	}
	if !errors.Is(wrapDeep(err), zk.ErrNotZooKeeper) || time.Since(began) > 10*time.Second || !strings.Contains(err.Error(), ln.Addr().String()) {
		t.Fatalf("NewSession against HTTP after %v: %v, want zk.ErrNotZooKeeper naming %s before ctx ends", time.Since(began), err, ln.Addr())
	}
}

// TestReviewBreak_WrongKindEveryAcquire: every acquiring call, on a path
// another kind of primitive holds, returns an error that errors.As finds
// as a *WrongKindError (naming the path and the kind found) and that is
// errors.Is ErrWrongKind, through a caller's wrapping; nothing is left
// behind for the holder to trip on (the holder still writes under its
// guard).
func TestReviewBreak_WrongKindEveryAcquire(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)

	type holder struct {
		kind  zklock.Kind
		take  func(p string) (guard func() []zk.Op, err error)
		tries map[string]bool // skip: the same family
	}
	holders := []holder{
		{zklock.KindMutex, func(p string) (func() []zk.Op, error) {
			m, err := zklock.NewMutex(s, p)
			if err != nil {
				return nil, err
			}
			return func() []zk.Op { return []zk.Op{m.Guard()} }, m.Lock(ctx)
		}, map[string]bool{"Mutex.Lock": true, "Mutex.TryLock": true, "ReentrantMutex.Lock": true, "Election.Campaign": true}},
		{zklock.KindRWMutexWrite, func(p string) (func() []zk.Op, error) {
			m, err := zklock.NewRWMutex(s, p)
			if err != nil {
				return nil, err
			}
			return func() []zk.Op { return []zk.Op{m.Guard()} }, m.Lock(ctx)
		}, map[string]bool{"RWMutex.Lock": true, "RWMutex.TryRLock": true}},
		{zklock.KindSemaphore, func(p string) (func() []zk.Op, error) {
			sem, err := zklock.NewSemaphore(s, p, 1)
			if err != nil {
				return nil, err
			}
			l, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return l.Guard, nil
		}, map[string]bool{"Semaphore.TryAcquire": true}},
	}
	tries := map[string]func(p string) error{
		"Mutex.Lock": func(p string) error {
			m, err := zklock.NewMutex(s2, p)
			if err != nil {
				return err
			}
			return m.Lock(ctx)
		},
		"Mutex.TryLock": func(p string) error {
			m, err := zklock.NewMutex(s2, p)
			if err != nil {
				return err
			}
			return m.TryLock(ctx)
		},
		"ReentrantMutex.Lock": func(p string) error {
			m, err := zklock.NewReentrantMutex(s2, p)
			if err != nil {
				return err
			}
			return m.Lock(ctx)
		},
		"RWMutex.Lock": func(p string) error {
			m, err := zklock.NewRWMutex(s2, p)
			if err != nil {
				return err
			}
			return m.Lock(ctx)
		},
		"RWMutex.TryRLock": func(p string) error {
			m, err := zklock.NewRWMutex(s2, p)
			if err != nil {
				return err
			}
			return m.TryRLock(ctx)
		},
		"Semaphore.TryAcquire": func(p string) error {
			sem, err := zklock.NewSemaphore(s2, p, 1)
			if err != nil {
				return err
			}
			_, err = sem.TryAcquire(ctx, 1)
			return err
		},
		"Election.Campaign": func(p string) error {
			e, err := zklock.NewElection(s2, p)
			if err != nil {
				return err
			}
			_, err = e.Campaign(ctx, nil)
			return err
		},
		"MultiLock.Lock": func(p string) error {
			m, err := zklock.NewMutex(s2, p)
			if err != nil {
				return err
			}
			ml, err := zklock.NewMultiLock(m)
			if err != nil {
				return err
			}
			return ml.Lock(ctx)
		},
	}
	for _, h := range holders {
		p := lockPath(t, string(h.kind))
		guard, err := h.take(p)
		if err != nil {
			t.Fatalf("%s holder: %v", h.kind, err)
		}
		for name, try := range tries {
			if h.tries[name] || (name == "MultiLock.Lock" && h.kind == zklock.KindMutex) {
				continue
			}
			err := try(p)
			var wk *zklock.WrongKindError
			if !errors.As(wrapDeep(err), &wk) || !errors.Is(wrapDeep(err), zklock.ErrWrongKind) {
				t.Errorf("%s on a %s's path: %v, want a *WrongKindError", name, h.kind, err)
				continue
			}
			if wk.Path != p || wk.Found == "" {
				t.Errorf("%s on a %s's path: %+v", name, h.kind, *wk)
			}
		}
		if err := guardWrites(ctx, s, data, string(h.kind), guard()...); err != nil {
			t.Errorf("the %s holder's guarded write after the refusals: %v", h.kind, err)
		}
	}
}

// replacementsProbe uses every replacement the CHANGELOG's Unreleased
// section gives for a moved or removed name, as it spells them.
const replacementsProbe = `package main

import (
	"context"
	"errors"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

func main() {}

func use(ctx context.Context, s *zklock.Session, m *zklock.Mutex, rw *zklock.RWMutex, r *zklock.ReentrantMutex,
	sem *zklock.Semaphore, l *zklock.Lease, term *zklock.Term, ml *zklock.MultiLock, li zklock.LeaderInfo,
	ls zklock.LockState, c zklock.Contender, le *zklock.LockedError, wk *zklock.WrongKindError, err error) {
	_ = []error{zklock.ErrInvalidArgument, zklock.ErrLockLost, zklock.ErrLocked, zklock.ErrNotLocked, zklock.ErrAlreadyLocked}
	_ = []string{m.Guard().Path, rw.Guard().Path, r.Guard().Path, l.Guard()[0].(*zk.CheckOp).Path, term.Guard().Path}
	for _, op := range ml.Guard() {
		_ = op.(*zk.CheckOp).Path
	}
	cs, _ := zklock.Contenders(ctx, s, "/p")
	_ = cs[0].Holds
	_ = s.Client().SessionID()
	_, _ = zklock.NewMultiLock(m, rw.ReadPart(), sem, r, rw)
	var st zk.State = s.Client().State()
	ev, _ := s.Client().Subscribe(ctx)
	var e zk.Event = <-ev
	_, _ = st, e
	_ = zklock.WithAuth("digest", []byte("u:p"))
	_ = zklock.WithACL(zk.AuthACL(zk.PermAll)...)
	_ = zklock.WithACL(zk.WorldACL(zk.PermAll)...)
	var tm zk.Timing = s.Client().Timing()
	_ = []any{tm.Timeout, tm.Tick, tm.SyncLimit, tm.Source}
	_ = s.Client().Timing().Timeout
	_ = s.OwnershipDeadline()
	_ = m.Lost()
	_ = zklock.WithSessionTimeout
	_ = zklock.WithMaxRequestSize
	_ = zklock.WithCohort(0, 0)
	_ = zklock.WithData
	_ = ls.Revoking
	_ = ls.Err
	var mt zklock.Metrics
	mt.Revoked(zklock.KindMutex, "/p")
	mt.Expired(zklock.KindMutex, "/p")
	mt.SessionState(zk.StateClosed)
	_ = li.Created
	_ = li.Session
	_ = wk.Found == "curator_leader_latch" || c.Kind == "kazoo_read_lock"
	var e2 *zklock.Election
	_, _ = e2.Observe(ctx)
	_ = le.Holders[0]
	_ = []any{le.Holder, le.Session, le.Data}
	_ = errors.Is(err, zklock.ErrHolderAlive)
	_, _ = zklock.WatchLock(ctx, s, "/p")
	_ = zklock.WithRevocable(func() {})
	_ = []any{zk.ModePersistent, zk.ModeEphemeral, zk.ModePersistentSequential, zk.ModeEphemeralSequential, zk.ModeContainer}
	_ = []any{zk.NodeCreated, zk.NodeDeleted, zk.NodeDataChanged, zk.NodeChildrenChanged, zk.NodeWatchEnded}
	var _ zk.Stat
	var _ *zk.Watch
	var _ zk.NodeEvent
	var _ zk.NodeEventType
	_ = []any{zk.PermRead, zk.PermWrite, zk.PermCreate, zk.PermDelete, zk.PermAdmin, zk.DigestACL}
	_ = zk.MaxDataSize
	_ = []error{zk.ErrNoNode, zk.ErrNodeExists, zk.ErrBadVersion, zk.ErrNoAuth, zk.ErrNotEmpty,
		zk.ErrNoChildrenForEphemerals, zk.ErrInvalidACL, zk.ErrAuthFailed, zk.ErrConnectionLoss,
		zk.ErrSessionExpired, zk.ErrSessionMoved, zk.ErrRolledBack, zk.ErrBadArguments, zk.ErrUnimplemented,
		zk.ErrInvalidArgument, zk.ErrNilContext, zk.ErrSessionClosed, zk.ErrNotZooKeeper}
	_, _ = s.Client().Multi(ctx, m.Guard(), &zk.SetDataOp{Path: "/p", Data: nil, Version: -1},
		&zk.CreateOp{Path: "/q", Mode: zk.ModePersistent}, &zk.DeleteOp{Path: "/q", Version: -1})
	var _ []zk.OpResult
	var _ zk.Op = &zk.CheckOp{}
	var _ zk.CreateMode
	var _ zk.ACL
}
`

// TestReviewBreak_ReplacementsCompile: every replacement the CHANGELOG
// gives ("old → new") exists as spelled: a program using them all builds.
func TestReviewBreak_ReplacementsCompile(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	probe := filepath.Join(dir, "probe.go")
	if err := os.WriteFile(probe, []byte(replacementsProbe), 0o600); err != nil {
		t.Fatal(err)
	}
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	overlay, err := json.Marshal(map[string]any{"Replace": map[string]string{filepath.Join(wd, "review48repl", "probe.go"): probe}})
	if err != nil {
		t.Fatal(err)
	}
	ov := filepath.Join(dir, "overlay.json")
	if err := os.WriteFile(ov, overlay, 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "build", "-gcflags=-e", "-overlay="+ov, "-o", os.DevNull, "./review48repl").CombinedOutput()
	if err != nil {
		t.Fatalf("the CHANGELOG's replacements do not build: %v\n%s", err, out)
	}
}

// TestReviewBreak_GuardAfterLoss: once a hold's loss signal fired (its
// bound, WithMaxHold, passed), the guard taken while it held stops
// committing once the node is released, as it is at the bound. And the permit layout's Lease guard
// composes as the lease layout's does.
func TestReviewBreak_GuardAfterLoss(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)

	m, err := zklock.NewMutex(s, lockPath(t, "m"), zklock.WithMaxHold(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	g := m.Guard()
	if err := guardWrites(ctx, s, data, "before the bound", g); err != nil {
		t.Fatal(err)
	}
	<-m.Lost()
	// m.Guard() after Lost still returns the check (its nil is for nothing
	// held, and the handle holds until Unlock), as Mutex.Guard's doc says.
	// A write under it commits only while the node
	// stands, which no rival holds meanwhile, so it is no safety matter.
	eventually(t, 10*time.Second, "the bound's release of the node", func() bool {
		_, ok, err := s.Client().Exists(ctx, g.Path)
		return err == nil && !ok
	})
	if err := guardWrites(ctx, s, data, "after the bound", g); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("guard of a hold past its bound: %v, want zk.ErrNoNode", err)
	}

	sem, err := zklock.NewSemaphore(s, lockPath(t, "permits"), 2, zklock.WithPermitLayout())
	if err != nil {
		t.Fatal(err)
	}
	l, err := sem.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	lg := l.Guard()
	if err := guardWrites(ctx, s, data, "permit", lg...); err != nil {
		t.Fatalf("a permit layout lease's guarded write: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := guardWrites(ctx, s, data, "permit released", lg...); !errors.Is(err, zk.ErrNoNode) {
		t.Fatalf("a released permit lease's guard: %v, want zk.ErrNoNode", err)
	}
}

// TestReviewBreak_GuardOfNonHolder: a handle that holds nothing gets no
// guard, even when another handle of its Session on the same path holds
// (another ReentrantMutex owner, another Mutex, a cohort member waiting):
// a guard is its own hold's, never its Session's.
func TestReviewBreak_GuardOfNonHolder(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	r1, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
	if err != nil {
		t.Fatal(err)
	}
	r2, err := zklock.NewReentrantMutex(s, lockPath(t, "r"))
	if err != nil {
		t.Fatal(err)
	}
	m1, err := zklock.NewMutex(s, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	m2, err := zklock.NewMutex(s, lockPath(t, "m"))
	if err != nil {
		t.Fatal(err)
	}
	c1, err := zklock.NewMutex(s, lockPath(t, "c"), zklock.WithCohort(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	c2, err := zklock.NewMutex(s, lockPath(t, "c"), zklock.WithCohort(0, 0))
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range []interface{ Lock(context.Context) error }{r1, m1, c1} {
		if err := l.Lock(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wctx, cancel := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() { waited <- c2.Lock(wctx) }()
	if g := r2.Guard(); g != nil {
		t.Errorf("another ReentrantMutex owner's Guard: %+v", *g)
	}
	if g := m2.Guard(); g != nil {
		t.Errorf("another Mutex handle's Guard: %+v", *g)
	}
	if g := c2.Guard(); g != nil {
		t.Errorf("a waiting cohort member's Guard: %+v", *g)
	}
	cancel()
	if err := <-waited; err == nil {
		t.Fatal("c2.Lock was granted while c1 holds")
	}
	if g := c2.Guard(); g != nil {
		t.Errorf("a cohort member whose Lock was cancelled: Guard %+v", *g)
	}
	for _, l := range []interface{ Unlock(context.Context) error }{r1, m1, c1} {
		if err := l.Unlock(ctx); err != nil {
			t.Fatal(err)
		}
	}
}

// TestReviewBreak_LeaseGuardCoversOneNode: a Lease of n leases holds n
// nodes; its Guard checked only the last (fixed: one check per node) ("the node behind Token"). When
// another of its nodes is deleted by another client (as Break deletes a
// lock's), a rival acquires the freed lease, and the Lease's guarded write
// still commits: the semaphore then has more leases in use than its limit,
// each writer believing it holds.
func TestReviewBreak_LeaseGuardCoversOneNode(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	s2 := newSession(t, srv.Servers())
	data := dataNode(ctx, t, s)
	p := lockPath(t, "sem")
	sem, err := zklock.NewSemaphore(s, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	l, err := sem.Acquire(ctx, 2)
	if err != nil {
		t.Fatal(err)
	}
	g := l.Guard()
	last := g[len(g)-1].(*zk.CheckOp).Path // the node behind Token
	cs, err := zklock.Contenders(ctx, s, p)
	if err != nil {
		t.Fatal(err)
	}
	var other string
	for _, c := range cs {
		if c.Holds && c.Session == s.Client().SessionID() && c.Path != last {
			other = c.Path
		}
	}
	if other == "" {
		t.Fatalf("no second node of the lease among %+v (token node %s)", cs, last)
	}
	if err := s2.Client().Delete(ctx, other, -1); err != nil {
		t.Fatal(err)
	}
	rival, err := zklock.NewSemaphore(s2, p, 2)
	if err != nil {
		t.Fatal(err)
	}
	rl, err := rival.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	defer rl.Release(ctx)
	if err := guardWrites(ctx, s, data, "lease of 2 with one node gone", g...); err == nil {
		t.Fatalf("the Lease's guarded write committed while a rival holds one of its 2 leases (limit 2): its guard checks only %s", last)
	}
}

// TestReviewBreak_DocsNameRemovedNames: README.md and docs/*.md (the
// prose and tables doccheck does not compile) name no removed name:
// not Type.Method of a removed method, nor zklock.Name of a removed name.
// docs/api.md's table of errors, the one place they are documented, lists
// the removed Session.Multi among the calls returning ErrInvalidArgument.
func TestReviewBreak_DocsNameRemovedNames(t *testing.T) {
	files, err := filepath.Glob("docs/*.md")
	if err != nil {
		t.Fatal(err)
	}
	files = append(files, "README.md")
	// Each name's pattern runs only on the lines that hold its text: the
	// 120 patterns over every line of docs/ took 20s of CPU under -race,
	// and a line without the text cannot match.
	type pat struct {
		text string
		re   *regexp.Regexp
	}
	var pats []pat
	for _, n := range removedNames {
		if strings.Contains(n.name, ".") {
			pats = append(pats, pat{n.name, regexp.MustCompile(`\b` + regexp.QuoteMeta(n.name) + `\b`)})
		} else {
			pats = append(pats, pat{"zklock." + n.name, regexp.MustCompile(`\bzklock\.` + n.name + `\b`)})
		}
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for i, line := range strings.Split(string(b), "\n") {
			for _, p := range pats {
				if !strings.Contains(line, p.text) {
					continue
				}
				for _, loc := range p.re.FindAllStringIndex(line, -1) {
					// sync.RWMutex.RLocker is the standard library's.
					if strings.HasSuffix(line[:loc[0]], "sync.") {
						continue
					}
					t.Errorf("%s:%d names the removed %s", f, i+1, line[loc[0]:loc[1]])
				}
			}
		}
	}
}

// TestReviewBreak_ErrorDocsAgree: the errors are documented twice, in
// errors.go (go doc) and in docs/api.md's table, which says "go doc names,
// for each sentinel, every call that returns it". Every call the table's
// "Returned by" column names for a sentinel must appear in that
// sentinel's paragraph of errors.go's doc (ErrInvalidArgument aside: its
// paragraph names callers by class).
func TestReviewBreak_ErrorDocsAgree(t *testing.T) {
	src, err := os.ReadFile("errors.go")
	if err != nil {
		t.Fatal(err)
	}
	godoc := map[string]string{} // sentinel → its bullet in errors.go's comment
	var cur string
	for _, l := range strings.Split(string(src), "\n") {
		if m := regexp.MustCompile(`^//   - (Err\w+):`).FindStringSubmatch(l); m != nil {
			cur = m[1]
		} else if !strings.HasPrefix(l, "//  ") {
			cur = ""
		}
		if cur != "" {
			godoc[cur] += " " + strings.TrimPrefix(l, "//")
		}
	}
	if len(godoc) != 12 {
		t.Fatalf("found %d sentinel paragraphs in errors.go, want 12: %v", len(godoc), godoc)
	}
	md, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	row := regexp.MustCompile("^\\|[^|]*\\| `(Err\\w+)`[^|]*\\|[^|]*\\| (.*) \\|$")
	rows := 0
	for _, l := range strings.Split(string(md), "\n") {
		m := row.FindStringSubmatch(l)
		if m == nil {
			continue
		}
		rows++
		if m[1] == "ErrInvalidArgument" {
			// errors.go names its callers by class ("constructors",
			// "every blocking method"); its stale Session.Multi is
			// TestReviewBreak_DocsNameRemovedNames'.
			continue
		}
		doc, ok := godoc[m[1]]
		if !ok {
			t.Errorf("docs/api.md's %s has no paragraph in errors.go", m[1])
			continue
		}
		for _, call := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(m[2], -1) {
			name := call[1]
			if strings.HasPrefix(name, "Err") {
				continue // "(which is ErrLockLost too)": a class, not a call
			}
			short := name[strings.LastIndex(name, ".")+1:]
			if !strings.Contains(doc, name) && !strings.Contains(doc, short) {
				t.Errorf("%s: docs/api.md says %s returns it; errors.go's paragraph does not name it", m[1], name)
			}
		}
	}
	if rows != 12 {
		t.Fatalf("found %d rows in docs/api.md's table, want 12", rows)
	}
}

// TestReviewBreak_ZKErrorsAllDocumented: docs/api.md, the page of the
// errors, lists zk's errors in a table; every error variable package zk
// exports must be on it. zk.ErrNotZooKeeper (NewSession's, for servers
// that answer in another protocol) is not.
func TestReviewBreak_ZKErrorsAllDocumented(t *testing.T) {
	src, err := os.ReadFile("zk/errors.go")
	if err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile("docs/api.md")
	if err != nil {
		t.Fatal(err)
	}
	names := regexp.MustCompile(`(?m)^\s+(Err\w+)\s*=`).FindAllStringSubmatch(string(src), -1)
	if len(names) < 15 {
		t.Fatalf("found %d error variables in zk/errors.go", len(names))
	}
	for _, n := range names {
		if !regexp.MustCompile(`\bzk\.` + n[1] + `\b`).Match(md) {
			t.Errorf("docs/api.md does not name zk.%s", n[1])
		}
	}
}
