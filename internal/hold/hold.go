package hold

import (
	"errors"
	"sync/atomic"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// TokenShift makes room in a fencing token for a local grant's index: a
// token is the place's czxid << TokenShift | the grant's index among the
// place's local grants (always 0 but in a cohort), so tokens strictly
// increase over local grants and stay below the next place's tokens.
const TokenShift = 12

// MaxLocalGrants is the most local grants one place can carry.
const MaxLocalGrants = 1<<TokenShift - 1

// Hold is one granted acquisition: its place, its loss signal, its fencing
// token and guard, and its layers. It is safe for concurrent use. A
// service may hold many at once: it is 32 bytes, its state one atomic.
type Hold struct {
	place *queue.Place
	w     *watch  // the layers; nil without
	co    *Cohort // the cohort of a local hold; nil without
	local int32   // the index of the grant among its place's (cohort.go)
	state atomic.Int32
}

// A hold's states: held, then releasing while a release is under way,
// then released, whatever the release's outcome (release.go): a hold
// never goes back to held.
const (
	held int32 = iota
	releasing
	released
)

// begin starts a release; false if one is under way or done.
func (h *Hold) begin() bool { return h.state.CompareAndSwap(held, releasing) }

func (h *Hold) finish() { h.state.Store(released) }

// Released reports whether the hold was given back (or counted so, lost).
func (h *Hold) Released() bool { return h.state.Load() == released }

// Releasing reports whether a release of h began: under way or done. Its
// node may be gone from the server before Released says so.
func (h *Hold) Releasing() bool { return h.state.Load() != held }

// closed is the loss signal of nothing held.
var closed = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Lost returns a channel closed when ownership may have ended: at the
// epoch's end (the ownership deadline, expiry, Close), at the hold's bound
// (Layers.MaxHold), and once it is released. Asked after the deadline
// passed, it is closed already (queue.Epoch.Lost checks).
func (h *Hold) Lost() <-chan struct{} {
	if h == nil || h.Released() {
		return closed
	}
	ep := h.place.Epoch().Lost()
	if h.w != nil && h.w.lost != nil {
		return h.w.lostAfter(ep)
	}
	return ep
}

// IsLost reports whether Lost is closed.
func (h *Hold) IsLost() bool {
	select {
	case <-h.Lost():
		return true
	default:
		return false
	}
}

// Revoked returns a channel closed when a revocation request arrives for a
// revocable hold (Layers.Revocable); nil otherwise.
func (h *Hold) Revoked() <-chan struct{} {
	if h == nil || h.w == nil {
		return nil
	}
	return h.w.revoked
}

// Token returns the hold's fencing token (see TokenShift); 0 for nil.
func (h *Hold) Token() int64 {
	if h == nil {
		return 0
	}
	return h.place.Last().Token<<TokenShift | int64(h.local)
}

// Node returns the path of the node that identifies the hold.
func (h *Hold) Node() string {
	if h == nil {
		return ""
	}
	return h.place.Last().Path
}

// Nodes returns the paths of every node of the hold (a lease's several).
func (h *Hold) Nodes() []string {
	if h == nil {
		return nil
	}
	out := make([]string, len(h.place.Held))
	for i, n := range h.place.Held {
		out[i] = n.Path
	}
	return out
}

// Guard is a check that commits a multi only while the hold's node exists
// with this data version (-1: any).
type Guard struct {
	Path    string
	Version int32
}

// Guard returns the hold's guard: its node exists, whatever its data. (A
// cohort's local holds check the data version the cohort wrote: cohort.go.)
// A sequence-layout hold has none (nil): once the lock path is reaped and
// re-created, a handle that took the path's earlier czxid for current
// may make, for a round trip, a node named like ours, at data version 0
// as ours was, so no check op tells it from ours (queue.Seq.Give).
func (h *Hold) Guard() *Guard {
	if h == nil || h.place.Last().Node().Kind == queue.KindSeqLock {
		return nil
	}
	if h.co != nil {
		return h.co.guard(h)
	}
	return &Guard{Path: h.place.Last().Path, Version: -1}
}

// Place returns the hold's place; its nodes must not be given back but
// through the Line.
func (h *Hold) Place() *queue.Place { return h.place }

// Epoch returns the epoch the hold was granted in.
func (h *Hold) Epoch() queue.Epoch { return h.place.Epoch() }

// errorsIsLost reports a Give that stopped because the epoch ended.
func errorsIsLost(err error) bool { return errors.Is(err, errs.ErrLockLost) }
