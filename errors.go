package zklock

import (
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/errs"
)

// Errors of the recipes, in four groups by what a caller does with them.
// Each is wrapped with detail (the message says what exactly, for example
// "zklock: invalid path: ..."); test for them with errors.Is. Errors from
// ZooKeeper itself are wrapped too, so errors.Is works for those as well.
//
// Fix the call: the arguments or the setup are wrong, and retrying the
// same call cannot help. Nothing was sent to the server, or nothing is
// left on it.
//
//   - ErrInvalidArgument: a bad argument or option value. Constructors
//     return it for a nil Session, a bad option value (an empty server
//     list, a non-positive timeout, a nil logger, a pair of options that do
//     not go together), a path ZooKeeper would refuse or zklock must not
//     use (relative, with a trailing slash, under /zookeeper, ...), and
//     data, or a path with data, over zk.MaxDataSize or the session's maximum
//     request size (WithMaxRequestSize); every blocking method for a nil
//     context; NewSemaphore for a limit below 1, Acquire and TryAcquire
//     for a count outside 1..limit, or when the limit stored on the server
//     for the path differs from the Semaphore's (processes must agree on
//     it; it comes before any wait); Election.Run for a nil function;
//     every method of a handle its constructor did not make (a zero
//     value, or nil) that would act, as os.File's on a nil *File.
//   - ErrWrongKind: the path holds another kind of primitive's nodes (an
//     RWMutex's beside a Mutex, a Semaphore's, Curator's LeaderLatch or
//     Kazoo's ReadLock), which would not exclude each other: use one kind
//     of primitive per path. Every acquiring method returns it at once,
//     wrapped in a *WrongKindError naming what it found. Mutex,
//     ReentrantMutex and Election share "lock-" nodes, with Curator's
//     InterProcessMutex and Kazoo's Lock, and refuse none of these. Of two
//     kinds that meet on a path the later is refused (both may be, when
//     they arrive together); a holder already there is not disturbed.
//   - ErrTimingUnknown: NewSession, when the servers run in an ensemble,
//     do not answer 'conf' (a stock ZooKeeper's 4lw.commands.whitelist is
//     srvr alone) and WithEnsembleTiming does not state their timing: the
//     ownership deadline rests on it (docs/ownership.md). Its message names
//     both fixes.
//   - ErrNotRevocable: Revoke, for a holder that is not revocable (see
//     WithRevocable) and whose node announces releases, so that a write
//     into it would look like a release to the waiter behind it; and for a
//     semaphore's lease, which no semaphore would hear.
//
// Wait or retry: someone else holds what the call needs, now.
//
//   - ErrLocked: TryLock, TryRLock and Semaphore.TryAcquire, when another
//     owner holds the lock (or the leases are not free) or others wait for
//     it. A lock's is wrapped in a *LockedError naming the holder.
//   - ErrHolderAlive: Break without force, when a holder's node exists: its
//     session is alive as far as ZooKeeper knows, and the holder may be
//     acting on the resource. Wrapped in a *LockedError naming the live
//     holders (its Holders).
//
// The hold is gone: give up the work it protected, stop using the
// resource, and start over (lock again, campaign again, or make a new
// Session).
//
//   - ErrLockLost: the hold's loss signal fired (the ownership deadline
//     passed, the session expired, the bound of WithMaxHold passed, or with
//     WithCohort another client deleted the node), so another client may
//     hold. Unlock, RUnlock, Lease.Release and Resign return it, as does a
//     Term's Err; so do a ReentrantMutex's re-entry into such a hold and an
//     RWMutex's Downgrade of it, which count and create nothing. The lost
//     hold counts as released: the handle may lock again.
//   - ErrResigned: a Term's Err after Resign ended it.
//   - ErrSessionClosed: any operation on a closed Session, and a blocking
//     call whose Session is closed while it waits.
//
// Misuse of a handle: the program's bookkeeping is wrong; fix the program,
// since retrying the same call cannot help.
//
//   - ErrNotLocked: Unlock (RUnlock, Lease.Release, Election.Resign,
//     MultiLock.Unlock) when the handle holds nothing: no Lock, a second
//     Unlock, more unlocks than locks, a lease already released, or an
//     Election that does not lead; Revoke and Break when nobody holds.
//   - ErrAlreadyLocked: MultiLock.Lock while the MultiLock holds or
//     acquires, and Campaign or Run on an Election already campaigning,
//     leading or running (an Election is one candidate). A Mutex, RWMutex
//     or ReentrantMutex shared by goroutines waits instead, as its sync
//     counterpart does.
//   - ErrNotOwner: ReentrantMutex.Unlock by an owner when another owner of
//     the same Session holds the lock.
var (
	// Fix the call.
	ErrInvalidArgument = errs.ErrInvalidArgument
	ErrWrongKind       = errs.ErrWrongKind
	ErrTimingUnknown   = errs.ErrTimingUnknown
	ErrNotRevocable    = errs.ErrNotRevocable

	// Wait or retry.
	ErrLocked      = errs.ErrLocked
	ErrHolderAlive = errs.ErrHolderAlive

	// The hold is gone: give up, start over.
	ErrLockLost      = errs.ErrLockLost
	ErrResigned      = errs.ErrResigned
	ErrSessionClosed = errs.ErrSessionClosed

	// Misuse of a handle.
	ErrNotLocked     = errs.ErrNotLocked
	ErrAlreadyLocked = errs.ErrAlreadyLocked
	ErrNotOwner      = errs.ErrNotOwner
)

// WrongKindError is returned, wrapping ErrWrongKind, by a primitive that
// found another kind of primitive's nodes on its path.
type WrongKindError struct {
	Path  string // the primitive's path
	Node  string // the child that shows the other kind: a node name, "locks" or "leases"
	Found Kind   // that kind: KindMutex (also an Election's, a ReentrantMutex's, Curator's or Kazoo's lock), KindRWMutexRead, ...
}

// Error names the path, the kind found and its node.
func (e *WrongKindError) Error() string {
	return fmt.Sprintf("%v: %s is used by a %s (node %s)", ErrWrongKind, e.Path, e.Found, e.Node)
}

// Unwrap returns ErrWrongKind.
func (e *WrongKindError) Unwrap() error { return ErrWrongKind }

// LockedError names who holds a lock. TryLock and TryRLock return one,
// wrapping ErrLocked, when another owner holds it; Break without force
// returns one, wrapping ErrHolderAlive, naming the holders whose sessions
// are alive (it deleted nothing).
type LockedError struct {
	Holder  string // the (first) holder's node name
	Session int64  // its session id (0 if unknown)
	Data    []byte // its node data (see WithData), without zklock's tags
	// Queued: Holder holds nothing yet. A TryRLock refused because a
	// writer is queued ahead (readers may not pass it) names that writer.
	Queued bool
	// Holders are the live holders Break found, Holder's first, with their
	// tokens and node creation times; nil in a Try's error.
	Holders []Contender
}

// Error names the holder.
func (e *LockedError) Error() string {
	if len(e.Holders) == 0 && e.Queued {
		return fmt.Sprintf("%v: behind %s, a writer queued ahead (session 0x%x, data %q)", ErrLocked, e.Holder, e.Session, e.Data)
	}
	if len(e.Holders) == 0 {
		return fmt.Sprintf("%v: held by %s (session 0x%x, data %q)", ErrLocked, e.Holder, e.Session, e.Data)
	}
	h, more := e.Holders[0], ""
	if n := len(e.Holders) - 1; n > 0 {
		more = fmt.Sprintf(" and %d more", n)
	}
	return fmt.Sprintf("%v: %s held by session 0x%x since %s (data %q)%s; break it only with force",
		ErrHolderAlive, h.Path, h.Session, h.Created.Format(time.RFC3339), h.Data, more)
}

// Unwrap returns ErrHolderAlive for Break's error (Holders set), ErrLocked
// otherwise.
func (e *LockedError) Unwrap() error {
	if len(e.Holders) > 0 {
		return ErrHolderAlive
	}
	return ErrLocked
}
