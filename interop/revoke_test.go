package interop_test

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// TestCuratorRevoker: Curator's Revoker.attemptRevoke writes a revocation
// request into a lock node's data. A zklock waiter behind that node sees
// the same NodeDataChanged that zklock's announced release causes.
//
// A zklock waiter takes a data change for a release only on a node whose
// data announces releases (zklock's own exclusive nodes). Pinned here
// against a real Curator: with WithListingHandoff the waiter never takes
// the write for a release (it lists the queue, finds the holder still
// there, and watches it again); with the default handoff it does, behind
// a zklock holder, and holds while the revoked holder still holds: the
// window WithListingHandoff's doc states; behind a Curator holder it does
// not, since a Curator node does not announce.
func TestCuratorRevoker(t *testing.T) {
	t.Parallel()
	t.Run("listing handoff", func(t *testing.T) {
		w := newWorld(t, needCurator)
		a, b, got, j := revokeAhead(t, w, zklock.WithListingHandoff())
		eventually(t, 10*time.Second, "the waiter watches the holder again", func() bool {
			return slices.Contains(watchedBy(t, w, b.SessionID()), a.Node())
		})
		select {
		case err := <-got:
			t.Fatalf("the waiter's Lock returned (%v) while the holder holds", err)
		default:
		}
		if err := a.m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if err := b.m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		j.end(t)
	})
	t.Run("default handoff, Curator holder", func(t *testing.T) {
		w := newWorld(t, needCurator)
		j := startCurator(t, w.args("java", "interactive", 0, ""))
		j.expect(t, "ready")
		j.send(t, "go")
		j.do(t, "acquire mutex 60000", "held mutex")
		s := w.session()
		m, err := zklock.NewMutex(s, w.path)
		if err != nil {
			t.Fatal(err)
		}
		holder := ""
		eventually(t, 10*time.Second, "Curator's node is there", func() bool {
			cs, err := zklock.Contenders(w.ctx, s, w.path)
			if err != nil {
				t.Fatal(err)
			}
			if len(cs) == 1 {
				holder = cs[0].Path
			}
			return holder != ""
		})
		got := make(chan error, 1)
		go func() { got <- m.Lock(w.ctx) }()
		eventually(t, 10*time.Second, "the waiter watches Curator's holder", func() bool {
			return slices.Contains(watchedBy(t, w, s.SessionID()), holder)
		})
		j.do(t, "revoke "+holder, "revoked")
		eventually(t, 10*time.Second, "the waiter watches Curator's holder again", func() bool {
			return slices.Contains(watchedBy(t, w, s.SessionID()), holder)
		})
		select {
		case err := <-got:
			t.Fatalf("the waiter's Lock returned (%v) while Curator holds", err)
		default:
		}
		j.do(t, "release mutex", "released mutex")
		if err := <-got; err != nil {
			t.Fatal(err)
		}
		if err := m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		j.end(t)
	})
	t.Run("default handoff: the documented window", func(t *testing.T) {
		w := newWorld(t, needCurator)
		a, b, got, j := revokeAhead(t, w)
		select {
		case err := <-got:
			if err != nil {
				t.Fatal(err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("the waiter did not take the revocation request for a release")
		}
		if nodeOf(a.m.Guard()) == "" || !exists(t, a, nodeOf(a.m.Guard())) {
			t.Fatal("the holder's node is gone: this was a release, not the window")
		}
		t.Logf("as documented: a revocation request on %s let %s in while it held", nodeOf(a.m.Guard()), nodeOf(b.m.Guard()))
		for _, m := range []*zklock.Mutex{b.m, a.m} {
			if err := m.Unlock(w.ctx); err != nil {
				t.Fatal(err)
			}
		}
		j.end(t)
	})
}

type party struct {
	s *zklock.Session
	m *zklock.Mutex
}

func (p party) SessionID() int64 { return p.s.SessionID() }
func (p party) Node() string     { return nodeOf(p.m.Guard()) }

// revokeAhead makes a hold the lock and b wait behind it, each on its own
// session, then has a Curator process revoke a's node. got receives b's
// Lock result.
func revokeAhead(t *testing.T, w *world, opts ...zklock.Option) (a, b party, got <-chan error, j *proc) {
	t.Helper()
	for _, p := range []*party{&a, &b} {
		p.s = w.session()
		m, err := zklock.NewMutex(p.s, w.path, opts...)
		if err != nil {
			t.Fatal(err)
		}
		p.m = m
	}
	if err := a.m.Lock(w.ctx); err != nil {
		t.Fatal(err)
	}
	ch := make(chan error, 1)
	go func() { ch <- b.m.Lock(w.ctx) }()
	eventually(t, 10*time.Second, "the waiter watches the holder", func() bool {
		return slices.Contains(watchedBy(t, w, b.SessionID()), a.Node())
	})
	j = startCurator(t, w.args("java", "interactive", 0, ""))
	j.expect(t, "ready")
	j.send(t, "go")
	// attemptRevoke returns once the server applied the write, which fired
	// and removed the waiter's watch: a watch seen after it is a new one.
	j.do(t, "revoke "+a.Node(), "revoked")
	return a, b, ch, j
}

// watchedBy lists the paths session sid watches, from the server's wchc.
func watchedBy(t *testing.T, w *world, sid int64) []string {
	t.Helper()
	ws, err := w.zk.Watches(w.ctx)
	if err != nil {
		t.Fatal(err)
	}
	return ws[sid]
}

func exists(t *testing.T, p party, node string) bool {
	t.Helper()
	_, ok, err := p.s.Client().Exists(t.Context(), node)
	if err != nil {
		t.Fatal(fmt.Errorf("exists %s: %w", node, err))
	}
	return ok
}

// eventually polls cond until it holds, failing the test after d.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(d); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", d, what)
		}
	}
}

// Revocation across libraries, in Curator's wire form: Curator's Revoker
// reaches a revocable zklock holder, and zklock's Revoke reaches a Curator
// holder made revocable (its RevocationListener runs).
func TestRevocationBothWays(t *testing.T) {
	t.Parallel()
	t.Run("Curator revokes zklock", func(t *testing.T) {
		w := newWorld(t, needCurator)
		m, err := zklock.NewMutex(w.session(), w.path, zklock.WithRevocable())
		if err != nil {
			t.Fatal(err)
		}
		if err := m.Lock(w.ctx); err != nil {
			t.Fatal(err)
		}
		j := startCurator(t, w.args("java", "interactive", 0, ""))
		j.expect(t, "ready")
		j.send(t, "go")
		sent := time.Now()
		j.do(t, "revoke "+nodeOf(m.Guard()), "revoked")
		select {
		case <-m.Revoked():
			t.Logf("Curator's request to zklock's signal: %v (including the driver's round trip)", time.Since(sent))
		case <-w.ctx.Done():
			t.Fatal("the zklock holder was not told")
		}
		if err := m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		j.end(t)
	})
	t.Run("zklock revokes Curator", func(t *testing.T) {
		w := newWorld(t, needCurator)
		j := startCurator(t, w.args("java", "interactive", 0, ""))
		j.expect(t, "ready")
		j.send(t, "go")
		j.do(t, "acquire rmutex 60000", "held rmutex")
		nodes, err := zklock.Revoke(w.ctx, w.session(), w.path)
		if err != nil {
			t.Fatal(err)
		}
		if len(nodes) != 1 {
			t.Fatalf("revoked %v, want Curator's holder", nodes)
		}
		j.expect(t, "revoke-requested rmutex")
		j.do(t, "release rmutex", "released rmutex")
		j.end(t)
	})
}

// nodeOf is the path of a guard's node: a hold's node, or "" for a nil
// guard (nothing held).
func nodeOf(g *zk.CheckOp) string {
	if g == nil {
		return ""
	}
	return g.Path
}
