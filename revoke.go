package zklock

import (
	"context"
	"fmt"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// revokeMessage is what a revocation request writes into a lock node's
// data: Apache Curator's (LockInternals.REVOKE_MESSAGE, "__REVOKE__"), so
// that Curator's Revoker reaches zklock holders and zklock's Revoke
// reaches Curator holders made revocable.
const revokeMessage = queue.RevokeMessage

// WithRevocable makes a Mutex, ReentrantMutex or RWMutex revocable: while
// it holds, each revocation request written into its node (by Revoke,
// `zklock revoke`, or Curator's Revoker.attemptRevoke) calls onRevoke,
// as Curator's makeRevocable(RevocationListener) does: once per request,
// on a goroutine of the Session's, which onRevoke must not block long
// (signal the holder's work and return: a close of a channel, a cancel).
// The holder decides what to do; a revocation asks, it does not take. A
// nil onRevoke is refused with ErrInvalidArgument. A revocable holder's node does not announce its
// release (see WithListingHandoff), so that the write of a request is never
// taken for one: handoffs behind it cost a listing. It costs the holder
// one watch on its own node and a goroutine of the Session while it holds.
// An RWMutex read lock taken by downgrading is revocable too (its node is
// tagged, and watched). Revocation applies to a Mutex, ReentrantMutex or
// RWMutex: NewSemaphore, NewElection, and WithCohort refuse it with
// ErrInvalidArgument (a cohort's node is shared by several holders, whom one
// request could not address). The default is not revocable.
func WithRevocable(onRevoke func()) Option {
	return func(o *primitiveOptions) error {
		if onRevoke == nil {
			return invalid("WithRevocable(nil)")
		}
		o.revocable, o.onRevoke = true, onRevoke
		return nil
	}
}

// Revoke asks the holders of a lock to release it, the way Curator's
// Revoker does: it writes Curator's "__REVOKE__" into their nodes, and returns the
// nodes it wrote. path is either one contender's node (a holder or a
// waiter, as listed by Contenders) or a lock path, whose holders are then
// revoked: the first contender (with a downgraded writer's read node), or,
// of an RWMutex held by readers, every reader ahead of the first writer. A zklock holder learns of it through
// its listener if it is revocable (WithRevocable); a Curator holder made
// revocable through its RevocationListener. It needs write permission on
// the nodes (their ACL), and returns ErrNotLocked for a path with no
// holder (a semaphore's path has none it can name).
//
// Revoke refuses with ErrNotRevocable, writing nothing, a node whose data
// carries zklock's mark of a node that announces its release (a Mutex,
// ReentrantMutex or RWMutex writer without WithRevocable): the waiter
// behind it would take the write for a release. It refuses a semaphore's
// lease node too: no semaphore is revocable. Other nodes cannot be told
// from Curator's, whose holders it must reach, so they are written even
// when nobody listens: a zklock reader without WithRevocable, an election
// candidate (its value then reads as a request), or a cohort's node
// (WithCohort: the cohort hands that node on no more once it needs a
// guard bump, which the write makes fail, and a Guard taken before it
// fails). No such write lets anyone in: only announcing nodes take a data
// change for a release.
func Revoke(ctx context.Context, s *Session, p string) ([]string, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if err := checkSession(s); err != nil {
		return nil, err
	}
	if err := queue.CheckPath(p); err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidPath, err)
	}
	return queue.Revoke(ctx, s.conn(), p)
}
