package interop_test

import (
	"errors"
	"testing"

	"github.com/zklock/zklock"
)

// TestCuratorMutex: zklock Mutex and Curator InterProcessMutex on one path.
func TestCuratorMutex(t *testing.T) {
	t.Parallel()
	t.Run("contend", func(t *testing.T) {
		w := newWorld(t, needCurator)
		procs := []*proc{
			startCurator(t, w.args("java-1", "mutex", cycles, holdMS)),
			startCurator(t, w.args("java-2", "mutex", cycles, holdMS)),
		}
		gos := []goParty{w.mutexParty("go-1"), w.mutexParty("go-2")}
		w.contend(gos, procs, cycles, hold)
		rep := verify(t, w.log, exclusive, wants(cycles, "go-1", "go-2", "java-1", "java-2"))
		t.Logf("grant order: %v", rep.order)
	})

	// Both directions, deterministically: Curator waits for zklock's holder
	// and zklock for Curator's, in one FIFO queue of five.
	t.Run("queue", func(t *testing.T) {
		w := newWorld(t, needCurator)
		j1 := startCurator(t, w.args("java-1", "interactive", 0, ""))
		j2 := startCurator(t, w.args("java-2", "interactive", 0, ""))
		for _, p := range []*proc{j1, j2} {
			p.expect(t, "ready")
			p.send(t, "go")
		}
		w.queueInOrder([]*member{w.goMember("go-1"), procMember(j1, "mutex"), w.goMember("go-2"),
			procMember(j2, "mutex"), w.goMember("go-3")})
		j1.end(t)
		j2.end(t)
	})

	// Neither side overtakes a holder of the other.
	t.Run("try", func(t *testing.T) {
		w := newWorld(t, needCurator)
		j := startCurator(t, w.args("java", "interactive", 0, ""))
		j.expect(t, "ready")
		j.send(t, "go")
		g := w.goMember("go")
		m := g.m
		if err := m.Lock(w.ctx); err != nil {
			t.Fatal(err)
		}
		j.do(t, "acquire mutex 300", "busy mutex")
		if err := m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		j.do(t, "acquire mutex 60000", "held mutex")
		err := m.TryLock(w.ctx)
		var le *zklock.LockedError
		if !errors.As(err, &le) || !errors.Is(err, zklock.ErrLocked) {
			t.Fatalf("TryLock while Curator holds: %v, want a *LockedError", err)
		}
		t.Logf("TryLock while Curator holds: %v", err)
		j.do(t, "release mutex", "released mutex")
		if err := m.TryLock(w.ctx); err != nil {
			t.Fatalf("TryLock after Curator released: %v", err)
		}
		if err := m.Unlock(w.ctx); err != nil {
			t.Fatal(err)
		}
		j.end(t)
	})
}
