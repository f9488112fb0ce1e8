package interop_test

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// TestCuratorRevoker: Curator's Revoker.attemptRevoke writes a revocation
// request into a lock node's data. A zklock waiter behind that node sees
// the same NodeDataChanged that zklock's announced release causes.
//
// With WithListingHandoff the waiter never takes the write for a release:
// it lists the queue, finds the holder still there, and watches it again.
// With the default handoff it does take it, and holds while the revoked
// holder still holds: the window WithListingHandoff's doc states. Both are
// pinned here against a real Curator.
func TestCuratorRevoker(t *testing.T) {
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
		if a.m.Node() == "" || !exists(t, a, a.m.Node()) {
			t.Fatal("the holder's node is gone: this was a release, not the window")
		}
		t.Logf("as documented: a revocation request on %s let %s in while it held", a.m.Node(), b.m.Node())
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
func (p party) Node() string     { return p.m.Node() }

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
	out, err := w.zk.FourLetter(w.ctx, 0, "wchc")
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	in := false
	for _, line := range strings.Split(out, "\n") {
		switch {
		case strings.HasPrefix(line, "0x"):
			id, err := strconv.ParseUint(strings.TrimSpace(line[2:]), 16, 64)
			in = err == nil && int64(id) == sid
		case in && strings.HasPrefix(line, "\t"):
			paths = append(paths, strings.TrimSpace(line))
		}
	}
	return paths
}

func exists(t *testing.T, p party, node string) bool {
	t.Helper()
	ok, _, err := p.s.Conn().Exists(node)
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
