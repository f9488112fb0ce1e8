package zklock

import (
	"context"

	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/zk"
)

// Lease is a set of leases of a Semaphore acquired together: it is one
// holder. Its methods are safe for concurrent use; a Lease must not be
// copied. A zero Lease holds nothing; its Release returns ErrInvalidArgument.
//
// Holding is not guaranteed once Lost fires: the session may have expired,
// taking the lease nodes with it, and others may hold the leases.
type Lease struct {
	line *hold.Line
	h    *hold.Hold
}

// cur is the lease's hold; nil (nothing held) for a zero or nil Lease.
func (l *Lease) cur() *hold.Hold {
	if l == nil {
		return nil
	}
	return l.h
}

// Release gives the leases back by deleting their nodes, retrying through
// connection loss until every delete succeeds, ctx ends, or ownership is
// lost. It returns ErrNotLocked if the lease was already released and
// ErrLockLost if Lost fired first (the lease then counts as released). If
// ctx ends while a delete is under way, the lease is over all the same, as
// Mutex.Unlock's acquisition is: the error wraps ctx.Err(), Lost is
// closed, the nodes left are deleted in the background, and a second
// Release returns ErrNotLocked.
func (l *Lease) Release(ctx context.Context) error {
	if l == nil || l.line == nil {
		return unmade("Lease", "Semaphore.Acquire")
	}
	return named(ctx, "release", l.line.Q.Dir, l.line.Release(ctx, l.h))
}

// Lost returns a channel that is closed when ownership of the lease may have
// ended: at the session's ownership deadline or on expiry, before the server
// can hand the leases to others (see Mutex.Lost). It is closed once the
// lease is released.
func (l *Lease) Lost() <-chan struct{} { return l.cur().Lost() }

// Token returns the lease's fencing token, made from the creation zxid of
// its last node as Mutex.Token's is: it increases over successive leases
// of the semaphore. It is 0 once the lease is released.
func (l *Lease) Token() int64 {
	if h := l.cur(); h == nil || h.Released() {
		return 0
	}
	return l.h.Token()
}

// Guard returns one ZooKeeper check per node of the lease (each a
// *zk.CheckOp), each succeeding only while its node exists (see
// Mutex.Guard): put them first in zk.Client.Multi (append the writes:
// s.Client().Multi(ctx, append(l.Guard(), writes...)...)) so that the
// writes commit only while every lease of l stands. Once released it
// returns one nil *zk.CheckOp, which Multi refuses (see MultiLock.Guard).
// Contenders lists the lease's nodes (those whose Session is ours and
// Holds).
func (l *Lease) Guard() []zk.Op {
	if h := l.cur(); h == nil || h.Released() {
		return noGuard()
	}
	nodes := l.h.Nodes()
	ops := make([]zk.Op, len(nodes))
	for i, n := range nodes {
		ops[i] = &zk.CheckOp{Path: n, Version: -1}
	}
	return ops
}
