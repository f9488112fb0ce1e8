package zklock

import (
	"context"
	"errors"
	"sync"

	"github.com/zklock/zklock/internal/queue"
)

// Lease is a set of leases of a Semaphore acquired together: it is one
// holder. Its methods are safe for concurrent use; a Lease must not be
// copied.
//
// Holding is not guaranteed once Lost fires: the session may have expired,
// taking the lease nodes with it, and others may hold the leases.
type Lease struct {
	sem *Semaphore

	mu       sync.Mutex
	held     []*queue.Held // not yet released
	permit   *queue.Permit // WithQueueLayout: held[0] and its holder's watch
	released bool
}

// Release gives the leases back by deleting their nodes, retrying through
// connection loss until every delete succeeds, ctx ends (then what is left
// is still held and Release may be called again), or ownership is lost. It
// returns ErrLeaseReleased if the lease was already released and
// ErrLeaseLost if Lost fired first (the lease then counts as released).
func (l *Lease) Release(ctx context.Context) error {
	if err := checkCtx(ctx); err != nil {
		return err
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.released {
		return ErrLeaseReleased
	}
	if l.permit != nil {
		return l.releasePermit(ctx)
	}
	q := l.sem.l.LeaseQueue()
	last := l.held[len(l.held)-1] // released last: identifies the Lease to Metrics
	for len(l.held) > 0 {
		err := q.Release(ctx, l.held[0])
		if errors.Is(err, queue.ErrLost) {
			l.held, l.released = nil, true
			l.sem.s.released(last)
			return ErrLeaseLost
		}
		if err != nil {
			return err
		}
		l.held = l.held[1:]
	}
	l.released = true
	l.sem.s.released(last)
	return nil
}

// Lost returns a channel that is closed when ownership of the lease may have
// ended: at the session's ownership deadline or on expiry, before the server
// can hand the leases to others (see Mutex.Lost). It is closed once the
// lease is released.
func (l *Lease) Lost() <-chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return closedCh
	}
	return l.held[0].Epoch.Lost() // all nodes share the epoch they were granted in
}

// Token returns the lease's fencing token, made from the creation zxid of
// its last node as Mutex.Token's is: it increases over successive leases
// of the semaphore. It is 0 once the lease is released.
func (l *Lease) Token() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return 0
	}
	return acquisition{h: l.held[len(l.held)-1]}.token()
}

// Node returns the full path of the node behind Token (the last of the
// lease's nodes; Nodes lists them all), or "" once released.
func (l *Lease) Node() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return ""
	}
	return l.held[len(l.held)-1].Path
}

// Guard returns a ZooKeeper check operation that succeeds only while the
// node behind Token exists (see Mutex.Guard), or nil once released.
func (l *Lease) Guard() *CheckOp {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.held) == 0 {
		return nil
	}
	return acquisition{h: l.held[len(l.held)-1]}.guard()
}

// Nodes returns the full paths of the lease nodes not yet released.
func (l *Lease) Nodes() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := make([]string, len(l.held))
	for i, h := range l.held {
		out[i] = h.Path
	}
	return out
}

// releasePermit is Release in the one-queue layout: one node.
func (l *Lease) releasePermit(ctx context.Context) error {
	h := l.held[0]
	err := l.sem.p.Release(ctx, l.permit)
	switch {
	case errors.Is(err, queue.ErrLost):
		l.held, l.released = nil, true
		l.sem.s.released(h)
		return ErrLeaseLost
	case err != nil:
		return err
	}
	l.held, l.released = nil, true
	l.sem.s.released(h)
	return nil
}
