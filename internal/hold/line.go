// Package hold is zklock's hold engine: the one owner of a hold's
// lifecycle. A Line takes a place in a recipe's queue through its
// Protocol, makes a Hold of it, adds the layers its options ask for (a
// bound on the hold's length, a revocation watch), reports it to Events,
// and gives it back. Every primitive is a Line (or two: an RWMutex's read
// and write lines) under a thin facade in the root package; a cohort is a
// Line that keeps its place across local grants (cohort.go); a MultiLock
// composes holds (multi.go).
//
// Data flows one way: the root package calls this one, this one calls the
// recipes (internal/queue), which call the session. Nothing here talks to
// the session but through the queue.
package hold

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// Protocol is a recipe: how a place is taken in its queue on the server
// and given back. Take enqueues and waits (r.Try: fails at once, with a
// *errs.LockedError or errs.ErrNotAcquired, where it would wait) and removes
// whatever it made on every failure; Give releases, retrying through
// connection loss until ctx ends (the place is then still held) or the
// place's epoch ends (errs.ErrLockLost). queue.Queue (locks, read-write locks,
// candidates), queue.Leases (Curator's semaphore) and queue.Permits (the
// permit semaphore) are the protocols.
type Protocol interface {
	Take(ctx context.Context, r queue.Request) (*queue.Place, error)
	Give(ctx context.Context, p *queue.Place) error
}

// Events receives the lifecycle of holds, for metrics. Its methods are
// called on the caller's goroutine and must not block. Now returns the
// zero time when nobody listens, which spares a clock read.
type Events interface {
	Now() time.Time
	Acquired(kind errs.Kind, path string, start time.Time, h *queue.Held, err error)
	Released(h *queue.Held)
	Revoked(kind errs.Kind, path string)
	Expired(kind errs.Kind, path string)
}

// Layers are what a hold may carry beyond its place.
type Layers struct {
	// MaxHold, if positive, bounds a hold: its loss signal fires that long
	// after the grant and its place is given back (bound.go).
	MaxHold time.Duration
	// Revocable holds watch their node's data for revocation requests
	// (revoke.go).
	Revocable bool
	// Q is the queue whose session runs the layers' goroutines and reads;
	// required with either. A Line's Conf leaves it unset: the Line's Q.
	Q *queue.Queue
}

func (ly Layers) any() bool { return ly.MaxHold > 0 || ly.Revocable }

// Line is one primitive's acquisitions: every call of its handle acquires
// through it. It is safe for concurrent use; each Acquire is its own
// acquisition, queued on the server in the order the calls reached it, so
// a handle used by several goroutines grants them in that order, one at a
// time where the recipe is exclusive. A service may hold many handles, so
// a Line is 32 bytes: its protocol, its queue (whose path is the line's)
// and what it shares with the lines of its kind and options (Conf).
type Line struct {
	P Protocol
	// Q is the queue whose path is the line's and whose session runs its
	// layers' goroutines and reads; required.
	Q *queue.Queue
	*Conf
}

// Conf is what a Line says beyond its queue; lines of one kind with the
// same options on one session may share one. It must not change once a
// Line has it.
type Conf struct {
	Kind   errs.Kind
	Events Events // nil: none
	Layers Layers // Q unset: the Line's
	Errs   *Errs  // nil: errs.ErrLockLost and errs.ErrNotLocked
	Data   []byte // the data of the line's nodes, for a handle that keeps none
}

// Errs are the errors Release returns: Lost for a hold whose loss signal
// fired, NotHeld for a hold released already.
type Errs struct{ Lost, NotHeld error }

// path is the line's lock path, for Events.
func (l *Line) path() string { return l.Q.Dir }

// layers are the line's layers, on its queue.
func (l *Line) layers() Layers {
	ly := l.Layers
	ly.Q = l.Q
	return ly
}

// CheckCtx refuses a nil or finished ctx before anything is sent.
func CheckCtx(ctx context.Context) error {
	if ctx == nil {
		return errs.ErrNilContext
	}
	return ctx.Err()
}

// Acquire is the one acquisition: it checks ctx, takes a place through the
// protocol, reports it, and makes it a hold with its layers. On error
// nothing is held and nothing is left on the server.
func (l *Line) Acquire(ctx context.Context, r queue.Request) (*Hold, error) {
	return l.acquire(ctx, l.Release, true, func() (*Hold, error) {
		p, err := l.P.Take(ctx, r)
		if err != nil {
			return nil, err
		}
		return l.grant(p, l.layers()), nil
	})
}

// acquire runs take, the step that differs between a Line's acquisition,
// a cohort's and a downgrade, between the steps they share: ctx checked
// before anything is sent, the hold handed over only if it is live
// (handOver), the wait and the hold reported to Events. A hold that is
// not live is given back through give; then take runs again (again: the
// call waits on, as a waiter does whose epoch ended, until ctx ends), or
// the call fails with the line's loss error.
func (l *Line) acquire(ctx context.Context, give func(context.Context, *Hold) error, again bool, take func() (*Hold, error)) (*Hold, error) {
	if err := CheckCtx(ctx); err != nil {
		return nil, err
	}
	var start time.Time
	if l.Events != nil {
		start = l.Events.Now()
	}
	h, err := take()
	for err == nil && !handOver(h) {
		giveBack(ctx, h, give)
		h, err = nil, l.lostErr()
		if again {
			h, err = take()
		}
	}
	if l.Events != nil {
		var last *queue.Held
		if h != nil {
			last = h.place.Last()
		}
		l.Events.Acquired(l.Kind, l.path(), start, last, err)
	}
	return h, err
}

// grant makes a hold of a place, with layers ly.
func (l *Line) grant(p *queue.Place, ly Layers) *Hold {
	h := &Hold{place: p}
	if ly.any() {
		h.w = l.watch(h, ly)
	}
	return h
}
