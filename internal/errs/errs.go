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

// The sentinels; root errors.go documents each.
var (
	ErrInvalidOption   = errors.New("zklock: invalid option")
	ErrInvalidPath     = errors.New("zklock: invalid path")
	ErrDataTooLarge    = errors.New("zklock: data too large")
	ErrNilContext      = errors.New("zklock: nil context")
	ErrSessionClosed   = errors.New("zklock: session closed")
	ErrLocked          = errors.New("zklock: locked by another owner")
	ErrNotLocked       = errors.New("zklock: not locked")
	ErrNotOwner        = errors.New("zklock: not the owner")
	ErrAlreadyLocked   = errors.New("zklock: already locked by this handle")
	ErrLockLost        = errors.New("zklock: lock lost")
	ErrAlreadyCampaign = errors.New("zklock: already campaigning")
	ErrNotLeader       = errors.New("zklock: not the leader")
	ErrNoLeader        = errors.New("zklock: no leader")
	ErrLeadershipLost  = errors.New("zklock: leadership lost")
	ErrResigned        = errors.New("zklock: resigned")
	ErrInvalidArgument = errors.New("zklock: invalid argument")
	ErrLimitMismatch   = errors.New("zklock: semaphore limit mismatch")
	ErrWrongKind       = errors.New("zklock: path in use by another kind of primitive")
	ErrNotAcquired     = errors.New("zklock: leases not acquired")
	ErrLeaseReleased   = errors.New("zklock: lease already released")
	ErrLeaseLost       = errors.New("zklock: lease lost")
	ErrNotRevocable    = errors.New("zklock: holder not revocable")
	ErrHolderAlive     = errors.New("zklock: holder's session is alive")
	ErrTimingUnknown   = errors.New("zklock: ensemble timing unknown")
	ErrNotZooKeeper    = errors.New("zklock: not a ZooKeeper server")
)

// LockedError is returned, wrapping ErrLocked, by a try acquisition that
// would have to wait.
type LockedError struct {
	Holder  string // the holder's node name
	Session int64  // the holder's session id (0 if unknown)
	Data    []byte // the holder's node data, without zklock's tags
}

func (e *LockedError) Error() string {
	return fmt.Sprintf("%v: held by %s (session 0x%x, data %q)", ErrLocked, e.Holder, e.Session, e.Data)
}

// Unwrap returns ErrLocked.
func (e *LockedError) Unwrap() error { return ErrLocked }

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
