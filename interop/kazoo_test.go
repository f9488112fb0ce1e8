package interop_test

import (
	"errors"
	"testing"

	"github.com/zklock/zklock"
)

// TestKazooMutex: zklock Mutex and Kazoo Lock created with
// extra_lock_patterns=["-lock-"] on one path.
func TestKazooMutex(t *testing.T) {
	t.Parallel()
	t.Run("contend", func(t *testing.T) {
		w := newWorld(t, needKazoo)
		procs := []*proc{
			startKazoo(t, w.args("py-1", "lock", cycles, holdMS)),
			startKazoo(t, w.args("py-2", "lock", cycles, holdMS)),
		}
		gos := []goParty{w.mutexParty("go-1"), w.mutexParty("go-2")}
		w.contend(gos, procs, cycles, hold)
		rep := verify(t, w.log, exclusive, wants(cycles, "go-1", "go-2", "py-1", "py-2"))
		t.Logf("grant order: %v", rep.order)
	})

	t.Run("queue", func(t *testing.T) {
		w := newWorld(t, needKazoo)
		p1 := startKazoo(t, w.args("py-1", "interactive", 0, ""))
		p2 := startKazoo(t, w.args("py-2", "interactive", 0, ""))
		for _, p := range []*proc{p1, p2} {
			p.expect(t, "ready")
			p.send(t, "go")
		}
		w.queueInOrder([]*member{procMember(p1, "lock"), w.goMember("go-1"), procMember(p2, "lock"),
			w.goMember("go-2"), w.goMember("go-3")})
		p1.end(t)
		p2.end(t)
	})

	t.Run("try", func(t *testing.T) {
		w := newWorld(t, needKazoo)
		p := startKazoo(t, w.args("py", "interactive", 0, ""))
		p.expect(t, "ready")
		p.send(t, "go")
		m := w.goMember("go").m
		if err := m.Lock(w.ctx); err != nil {
			t.Fatal(err)
		}
		p.do(t, "acquire lock 300", "busy lock")
		if err := m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		p.do(t, "acquire lock 60000", "held lock")
		if err := m.TryLock(w.ctx); !errors.Is(err, zklock.ErrLocked) {
			t.Fatalf("TryLock while Kazoo holds: %v, want ErrLocked", err)
		}
		p.do(t, "release lock", "released lock")
		if err := m.TryLock(w.ctx); err != nil {
			t.Fatalf("TryLock after Kazoo released: %v", err)
		}
		if err := m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		p.end(t)
	})
}

// TestNeverShare is a negative control: it shows, with the real libraries,
// the double holds docs/interop.md warns about, and that the checker sees them.
// If one of these starts to pass the checker, a library changed its
// ordering and that advice needs another look.
func TestNeverShare(t *testing.T) {
	t.Parallel()
	// Default Kazoo does not see "-lock-" nodes: it takes a lock that zklock
	// holds.
	t.Run("zklock and default Kazoo", func(t *testing.T) {
		w := newWorld(t, needKazoo)
		p := startKazoo(t, w.args("py", "interactive", 0, ""))
		p.expect(t, "ready")
		p.send(t, "go")
		m := w.goMember("go").m
		w.step("go", "start", "mutex", m.Lock(w.ctx))
		p.do(t, "acquire lock-default 10000", "held lock-default")
		p.do(t, "release lock-default", "released lock-default")
		w.step("go", "end", "mutex", m.Unlock(w.ctx))
		p.end(t)
		wantDoubleHold(t, w.log.events(t))
	})

	// Curator orders a Kazoo node by its whole name, "<32 hex>__lock__<seq>",
	// against its own bare sequence "0000000001": it takes a lock that Kazoo
	// holds, even Kazoo with the extra pattern (it could not only if the
	// random hex began with nine zeros). And default Kazoo does not see
	// Curator's node.
	t.Run("Curator and Kazoo", func(t *testing.T) {
		w := newWorld(t, needCurator, needKazoo)
		j := startCurator(t, w.args("java", "interactive", 0, ""))
		p := startKazoo(t, w.args("py", "interactive", 0, ""))
		for _, d := range []*proc{j, p} {
			d.expect(t, "ready")
			d.send(t, "go")
		}
		p.do(t, "acquire lock 60000", "held lock")
		j.do(t, "acquire mutex 10000", "held mutex")
		j.do(t, "release mutex", "released mutex")
		p.do(t, "release lock", "released lock")
		first := w.log.events(t)
		wantDoubleHold(t, first)

		j.do(t, "acquire mutex 60000", "held mutex")
		p.do(t, "acquire lock-default 10000", "held lock-default")
		p.do(t, "release lock-default", "released lock-default")
		j.do(t, "release mutex", "released mutex")
		p.end(t)
		j.end(t)
		wantDoubleHold(t, w.log.events(t)[len(first):])
	})
}

// wantDoubleHold fails the test unless the checker finds two owners at once
// in evs.
func wantDoubleHold(t *testing.T, evs []event) {
	t.Helper()
	rep := check(evs, exclusive)
	if len(rep.violations) == 0 {
		t.Fatalf("no double hold: the libraries now exclude each other on one path")
	}
	t.Logf("double hold, as expected: %v", rep.violations)
}
