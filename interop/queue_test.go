package interop_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/zklock/zklock"
)

// member is one contender of a queue built in a chosen order: a zklock
// Mutex in the test process, or an interactive driver taking kind.
type member struct {
	id   string
	p    *proc
	kind string
	m    *zklock.Mutex

	held    chan error    // the Mutex's Lock returned
	release chan struct{} // closed to make it Unlock
	done    chan error    // its Unlock returned
}

func (w *world) goMember(id string) *member {
	m, err := zklock.NewMutex(w.session(), w.path, zklock.WithData([]byte(id)))
	if err != nil {
		w.t.Fatal(err)
	}
	return &member{id: id, m: m, held: make(chan error, 1), release: make(chan struct{}), done: make(chan error, 1)}
}

func procMember(p *proc, kind string) *member { return &member{id: p.name, p: p, kind: kind} }

// enqueue starts the member's acquisition without waiting for it.
func (w *world) enqueue(m *member) {
	if m.p != nil {
		m.p.send(w.t, fmt.Sprintf("acquire %s %d", m.kind, stepTimeout.Milliseconds()))
		return
	}
	go func() {
		err := m.m.Lock(w.ctx)
		if err == nil {
			err = w.log.record(m.id, "start", "mutex")
		}
		m.held <- err
		if err != nil {
			return
		}
		select {
		case <-m.release:
		case <-w.ctx.Done(): // the test failed; give the lock back anyway
		}
		err = w.log.record(m.id, "end", "mutex")
		m.done <- errors.Join(err, m.m.Unlock(context.WithoutCancel(w.ctx)))
	}()
}

func (w *world) awaitHeld(m *member) {
	w.t.Helper()
	if m.p != nil {
		m.p.expect(w.t, "held "+m.kind)
		return
	}
	select {
	case err := <-m.held:
		if err != nil {
			w.t.Fatalf("%s: Lock: %v", m.id, err)
		}
	case <-time.After(stepTimeout):
		w.t.Fatalf("%s did not get the lock within %v", m.id, stepTimeout)
	}
}

func (w *world) releaseMember(m *member) {
	w.t.Helper()
	if m.p != nil {
		m.p.do(w.t, "release "+m.kind, "released "+m.kind)
		return
	}
	close(m.release)
	select {
	case err := <-m.done:
		if err != nil {
			w.t.Fatalf("%s: Unlock: %v", m.id, err)
		}
	case <-time.After(stepTimeout):
		w.t.Fatalf("%s did not unlock within %v", m.id, stepTimeout)
	}
}

// waitQueue waits until w's path shows n contenders (only the waiters,
// when waiting: a semaphore's queue for leases).
func (w *world) waitQueue(waiting bool, n int) {
	w.t.Helper()
	if w.observer == nil {
		w.observer = w.session()
	}
	s := w.observer
	deadline := time.Now().Add(stepTimeout)
	for {
		cs, err := zklock.Contenders(w.ctx, s, w.path)
		if waiting {
			cs = slices.DeleteFunc(cs, func(c zklock.Contender) bool { return c.Holds })
		}
		if err != nil {
			w.t.Fatalf("Contenders: %v", err)
		}
		if len(cs) == n {
			return
		}
		if time.Now().After(deadline) {
			w.t.Fatalf("the queue has %d contenders after %v, want %d: %+v", len(cs), stepTimeout, n, cs)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// queueInOrder makes the members contend for one lock in the given order,
// each enqueued once the previous one's node is in the queue, then releases
// them one by one: each must be granted exactly after the one before it,
// whatever library either of them uses. The drivers must have said ready.
func (w *world) queueInOrder(members []*member) {
	t := w.t
	t.Helper()
	for i, m := range members {
		w.enqueue(m)
		if i == 0 {
			w.awaitHeld(m)
		}
		w.waitQueue(false, i+1)
	}
	for i, m := range members {
		w.releaseMember(m)
		if i+1 < len(members) {
			w.awaitHeld(members[i+1])
		}
	}
	rep := verify(t, w.log, exclusive, wants(1, ids(members)...))
	if !slices.Equal(rep.order, ids(members)) {
		t.Errorf("granted in the order %v, want %v", rep.order, ids(members))
	}
}

func ids(ms []*member) []string {
	out := make([]string, len(ms))
	for i, m := range ms {
		out[i] = m.id
	}
	return out
}
