package queue

import (
	"context"
	"errors"
	"sync/atomic"

	"github.com/zklock/zklock/internal/errs"
)

// Place is what an acquisition holds in its recipe's queue: one node for
// a lock, a read or write lock, a candidate or a permit request, one node
// per lease for Curator's semaphore layout. The last node identifies the
// place: its czxid is the fencing token, its path the guard's and Node's.
type Place struct {
	Held []*Held
	// quiet: give the place back without announcing its release, because
	// the holder keeps (or may keep) another node at its position that a
	// waiter must see (a downgraded writer's read node). Atomic: it is set
	// by a downgrade while a release of the place may read it (SetQuiet).
	quiet  atomic.Bool
	permit *Permit  // the permit layout's holder watch
	one    [1]*Held // Held's array for one node (OnePlace): no allocation of its own
}

// OnePlace returns the place of one node, h.
func OnePlace(h *Held) *Place {
	p := &Place{}
	p.one[0] = h
	p.Held = p.one[:]
	return p
}

// SetQuiet makes every later Give of the place leave without announcing
// its release. A Give that began before it may still announce: a caller
// that places a node beside the place sets it first, then checks that no
// release began (sequentially consistent atomics: of the release's begin
// and this store, each side sees the one that came first).
func (p *Place) SetQuiet() { p.quiet.Store(true) }

// Stop ends what the place runs beside its nodes (the permit layout's
// holder watch), for a place given up without a Give that succeeded: its
// nodes are then deleted by other means (Conn.Discard).
func (p *Place) Stop() {
	if p.permit != nil {
		p.permit.Stop()
	}
}

// Quiet reports whether SetQuiet was called.
func (p *Place) Quiet() bool { return p.quiet.Load() }

// Last returns the node that identifies the place.
func (p *Place) Last() *Held { return p.Held[len(p.Held)-1] }

// Epoch returns the epoch the place was granted in; all its nodes share it.
func (p *Place) Epoch() Epoch { return p.Held[0].Epoch }

// Every recipe takes and gives a place with the same two calls, so that
// the hold engine runs them all: Take enqueues and waits (r.Try: fails at
// once with a *errs.LockedError or errs.ErrNotAcquired when it would wait),
// and removes whatever it made on every failure; Give releases, retrying
// through connection loss until ctx ends (the place is then still held) or
// the epoch ends (errs.ErrLockLost).

// Take is Acquire for the hold engine: a lock, read, write or candidate
// node.
func (q *Queue) Take(ctx context.Context, r Request) (*Place, error) {
	h, err := q.Acquire(ctx, r)
	if err != nil {
		return nil, err
	}
	return OnePlace(h), nil
}

// Give releases the place's node: announced when the release may be
// (Release), plain when the place is Quiet (Leave).
func (q *Queue) Give(ctx context.Context, p *Place) error {
	if p.Quiet() {
		return q.Leave(ctx, p.Held[0])
	}
	return q.Release(ctx, p.Held[0])
}

// Take acquires r.N leases, all or none, under the limit stored on the
// server (lease_limit.go).
func (l *Leases) Take(ctx context.Context, r Request) (*Place, error) {
	g, err := l.Acquire(ctx, LeaseRequest{N: max(r.N, 1), Data: r.Data, Try: r.Try,
		Check: l.check, Precheck: l.precheck})
	if errors.Is(err, errs.ErrWrongKind) {
		l.dropLayout(ctx)
	}
	if err != nil {
		return nil, err
	}
	return &Place{Held: g.Held}, nil
}

// Give releases every lease of the place, in order; after a failure the
// ones left are still held, and Give may be called again.
func (l *Leases) Give(ctx context.Context, p *Place) error {
	q := l.LeaseQueue()
	for len(p.Held) > 1 {
		if err := q.Release(ctx, p.Held[0]); err != nil {
			return err
		}
		p.Held = p.Held[1:]
	}
	return q.Release(ctx, p.Held[0])
}

// Take acquires r.N permits in one node.
func (p *Permits) Take(ctx context.Context, r Request) (*Place, error) {
	pm, err := p.Acquire(ctx, PermitRequest{N: max(r.N, 1), Data: r.Data, Try: r.Try})
	if err != nil {
		return nil, err
	}
	pl := OnePlace(pm.Held)
	pl.permit = pm
	return pl, nil
}

// Give releases the permits' node and stops its holder's watch.
func (p *Permits) Give(ctx context.Context, pl *Place) error {
	return p.Release(ctx, pl.permit)
}
