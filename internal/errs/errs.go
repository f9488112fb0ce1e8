// Package errs is zklock's one error set and its one vocabulary of kinds,
// defined here, below every layer that returns them, so that no layer
// translates another's errors. The root package exports each under its
// public name (ErrLocked is errs.ErrLocked) with the contract that says who
// returns it.
package errs

import (
	"errors"
	"fmt"
)

// The public sentinels; root errors.go documents each, grouped by what a
// caller does with them.
var (
	ErrInvalidArgument = errors.New("zklock: invalid argument")
	ErrTimingUnknown   = errors.New("zklock: ensemble timing unknown")
	ErrWrongKind       = errors.New("zklock: path in use by another kind of primitive")
	ErrNotRevocable    = errors.New("zklock: holder not revocable")
	ErrLocked          = errors.New("zklock: locked by another owner")
	ErrHolderAlive     = errors.New("zklock: holder's session is alive")
	ErrLockLost        = errors.New("zklock: lock lost")
	ErrResigned        = errors.New("zklock: resigned")
	ErrSessionClosed   = errors.New("zklock: session closed")
	ErrNotLocked       = errors.New("zklock: not locked")
	ErrAlreadyLocked   = errors.New("zklock: already locked by this handle")
	ErrNotOwner        = errors.New("zklock: not the owner")
	ErrNotZooKeeper    = errors.New("zklock: not a ZooKeeper server")
)

// Finer errors, each of one public class: errors.Is matches the class (an
// invalid option is an invalid argument), and the message stays specific.
// The layers below the root package return them; the root exports only
// the classes.
var (
	ErrInvalidOption   = Of(ErrInvalidArgument, "zklock: invalid option")
	ErrInvalidPath     = Of(ErrInvalidArgument, "zklock: invalid path")
	ErrDataTooLarge    = Of(ErrInvalidArgument, "zklock: data too large")
	ErrNilContext      = Of(ErrInvalidArgument, "zklock: nil context")
	ErrLimitMismatch   = Of(ErrInvalidArgument, "zklock: semaphore limit mismatch")
	ErrNotAcquired     = Of(ErrLocked, "zklock: leases not acquired")
	ErrLeaseLost       = Of(ErrLockLost, "zklock: lease lost")
	ErrLeadershipLost  = Of(ErrLockLost, "zklock: leadership lost")
	ErrNotLeader       = Of(ErrNotLocked, "zklock: not the leader")
	ErrLeaseReleased   = Of(ErrNotLocked, "zklock: lease already released")
	ErrAlreadyCampaign = Of(ErrAlreadyLocked, "zklock: already campaigning")
)

// Of returns an error with message msg that errors.Is matches against
// class too.
func Of(class error, msg string) error { return &fine{msg, class} }

type fine struct {
	msg   string
	class error
}

func (e *fine) Error() string { return e.msg }
func (e *fine) Unwrap() error { return e.class }

// LockedError is returned, wrapping ErrLocked, by a try acquisition that
// would have to wait.
type LockedError struct {
	Holder  string // the holder's node name
	Session int64  // the holder's session id (0 if unknown)
	Data    []byte // the holder's node data, without zklock's tags
	Queued  bool   // Holder holds nothing yet: a writer queued ahead of a reader
}

func (e *LockedError) Error() string {
	if e.Queued {
		return fmt.Sprintf("%v: behind %s, a writer queued ahead (session 0x%x, data %q)", ErrLocked, e.Holder, e.Session, e.Data)
	}
	return fmt.Sprintf("%v: held by %s (session 0x%x, data %q)", ErrLocked, e.Holder, e.Session, e.Data)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

// As fills the root package's LockedError for errors.As (see asPublic).
func (e *LockedError) As(target any) bool { return asPublic(e, target) }

// WrongKindError is returned, wrapping ErrWrongKind, when a path holds
// another kind of primitive's nodes.
type WrongKindError struct {
	Path  string // the primitive's path
	Node  string // the child that belongs to another kind: a node name, "locks" or "leases"
	Found Kind   // the kind of primitive the node belongs to
}

func (e *WrongKindError) Error() string {
	return fmt.Sprintf("%v: %s is used by a %s (node %s)", ErrWrongKind, e.Path, e.Found, e.Node)
}

// Unwrap returns ErrWrongKind.
func (e *WrongKindError) Unwrap() error { return ErrWrongKind }

// As fills the root package's WrongKindError for errors.As (see asPublic).
func (e *WrongKindError) As(target any) bool { return asPublic(e, target) }

// Kind names a kind of primitive: in metrics, in WrongKindError.Found, and
// in the CLI. Node names on the wire ("lock-", "__READ__", ...) are another
// thing, package queue's.
type Kind string

// The kinds. The peers' are kinds a zklock primitive can meet on a path.
const (
	Mutex           Kind = "mutex"
	ReentrantMutex  Kind = "reentrant_mutex"
	RWMutexRead     Kind = "rwmutex_read"
	RWMutexWrite    Kind = "rwmutex_write"
	RWMutex         Kind = "rwmutex"          // a read-write lock's path as a whole (LockState)
	Semaphore       Kind = "semaphore"        // Curator's layout
	SemaphorePermit Kind = "semaphore_permit" // zklock's permit layout
	MutexSeq        Kind = "mutex_seq"        // a Mutex in zklock's sequence layout
	Election        Kind = "election"
	LeaderLatch     Kind = "curator_leader_latch"
	KazooReadLock   Kind = "kazoo_read_lock"
)
