package zklock

import (
	"context"
	"errors"
	"fmt"
	pathpkg "path"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// Break deletes the nodes of a lock's holders, for an operator facing a
// stuck lock: the first contender at path (with the read node beside it
// of a writer that downgraded: both are its holds), or, of an RWMutex held
// by readers, every reader ahead of the first writer (as Revoke finds
// them). It returns them as they were.
//
// A holder's node exists only while its session lives, so every holder
// Break finds has a live session as far as ZooKeeper knows: it may be hung,
// or it may be working. Without force Break deletes nothing and returns a
// *LockedError wrapping ErrHolderAlive, whose Holders are the live holders; ask
// it to let go with Revoke first, or wait for its session to expire. With
// force it deletes the nodes, and the next contender holds. Breaking does
// not stop the old holder: it is not told (its Lost does not fire: its
// session is fine), and it may still act on the resource. Only fencing
// protects the resource then: the old holder's Guard fails, and the new
// holder's Token is larger than the old one's. Break needs delete
// permission on the lock path (its ACL), and returns ErrNotLocked when
// nobody holds (a semaphore's path has no holder it can name).
//
// What the broken holder's handle does next: nothing is granted on a
// broken node after the handle learns of it. An RWMutex downgrade (RLock
// while holding the write lock) finds the write node gone and returns
// ErrLockLost. A cohort (WithCohort) that sees its node deleted hands it
// to no local waiter (they enqueue again, behind the new holder) and its
// holder's Unlock returns ErrLockLost; a local handoff in the moment
// between the deletion and its notification is the one left, fenced like
// the old holder. An Election's Term ends (its Lost fires) when the
// candidate's watch sees its node go, which may be after the next
// candidate leads. A MultiLock is not told of a broken part.
func Break(ctx context.Context, s *Session, path string, force bool) ([]Contender, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	if err := checkSession(s); err != nil {
		return nil, err
	}
	if err := queue.CheckPath(path); err != nil {
		return nil, fmt.Errorf("%w: %v", errs.ErrInvalidPath, err)
	}
	entries, err := queue.Break(ctx, s.conn(), path, force)
	out := make([]Contender, len(entries))
	for i, e := range entries {
		out[i] = contender(path, e)
		out[i].Holds = true // Break deletes holders' nodes only
	}
	if errors.Is(err, ErrHolderAlive) {
		h := out[0]
		return nil, &LockedError{Holder: pathpkg.Base(h.Path), Session: h.Session, Data: h.Data, Holders: out}
	}
	if err != nil {
		return nil, err
	}
	return out, nil
}
