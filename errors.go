package zklock

import (
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// Errors returned by zklock. Each may be wrapped with detail; test for them
// with errors.Is. Errors from ZooKeeper itself (for example ErrNoAuth) are
// wrapped too, so errors.Is works for those as well.
var (
	// ErrInvalidOption is returned by constructors given a bad option value:
	// an empty server list, an unparsable address, a non-positive timeout, a
	// nil logger, and so on.
	ErrInvalidOption = errs.ErrInvalidOption

	// ErrInvalidPath is returned by constructors given a path ZooKeeper would
	// refuse or that zklock must not use: empty, relative, with a trailing
	// slash or empty segment, "." or "..", invalid characters, under
	// /zookeeper, or so long that a create request under it would exceed the
	// session's maximum request size (WithMaxRequestSize).
	ErrInvalidPath = errs.ErrInvalidPath

	// ErrDataTooLarge is returned by WithData and Election.Campaign for data
	// over MaxDataSize, and by constructors and Campaign when the data with
	// the path make a create request over the session's maximum request size
	// (WithMaxRequestSize): the server would drop the connection instead.
	ErrDataTooLarge = errs.ErrDataTooLarge

	// ErrNilContext is returned by every blocking method given a nil context.
	ErrNilContext = errs.ErrNilContext

	// ErrSessionClosed is returned by operations on a closed Session, and by
	// blocking calls whose Session is closed while they wait.
	ErrSessionClosed = errs.ErrSessionClosed

	// ErrLocked is returned by TryLock (and TryRLock) when another owner
	// holds the lock. It is wrapped in a *LockedError naming the holder.
	ErrLocked = errs.ErrLocked

	// ErrNotLocked is returned by Unlock (and RUnlock) when the handle holds
	// nothing: Unlock without Lock, a second Unlock, or more unlocks than
	// locks.
	ErrNotLocked = errs.ErrNotLocked

	// ErrAlreadyLocked is returned by MultiLock.Lock while the MultiLock
	// holds or acquires. (A Mutex, RWMutex or ReentrantMutex shared by
	// goroutines waits instead, as its sync counterpart does.)
	ErrAlreadyLocked = errs.ErrAlreadyLocked

	// ErrNotOwner is returned when an owner releases a lock held by another
	// owner of the same Session.
	ErrNotOwner = errs.ErrNotOwner

	// ErrLockLost is returned by Unlock after the acquisition's loss signal
	// fired: the ownership deadline passed, the session expired, or the
	// bound (WithMaxHold) passed, so the lock may have been granted to
	// another client; with WithCohort also once the cohort saw its node
	// deleted by another client (Break). Re-entry into such a hold (a
	// ReentrantMutex's Lock) and an RWMutex's Downgrade of it return it too,
	// counting and creating nothing. The handle may lock again once it
	// released the lost hold.
	ErrLockLost = errs.ErrLockLost

	// ErrAlreadyCampaigning is returned at once by Campaign and Run on an
	// Election that is already campaigning (a Campaign waits), leading or
	// running Run: an Election is one candidate, so the second call queues
	// nothing.
	ErrAlreadyCampaigning = errs.ErrAlreadyCampaign

	// ErrNotLeader is returned by Resign when the Election does not lead:
	// it never campaigned, its Campaign has not returned, or it resigned.
	ErrNotLeader = errs.ErrNotLeader

	// ErrNoLeader is returned by Leader when no candidate is campaigning.
	ErrNoLeader = errs.ErrNoLeader

	// ErrLeadershipLost is returned by Resign, and is a Term's Err, once the
	// term's loss signal fired: the ownership deadline passed, the session
	// expired or it was closed, so another candidate may lead.
	ErrLeadershipLost = errs.ErrLeadershipLost

	// ErrResigned is a Term's Err after Resign ended it.
	ErrResigned = errs.ErrResigned

	// ErrInvalidArgument is returned for a bad argument (options have
	// ErrInvalidOption): by every constructor given a nil Session, by
	// NewSemaphore for a limit below 1, by Semaphore.Acquire and TryAcquire
	// for a count below 1 or above the limit, by Election.Run for a nil
	// function, and by Session.Multi for a nil Op (a Guard taken while
	// nothing was held is nil) or a CreateOp of an unknown mode. Nothing is
	// sent to the server.
	ErrInvalidArgument = errs.ErrInvalidArgument

	// ErrLimitMismatch is returned by Semaphore.Acquire and TryAcquire when
	// the limit stored on the server for the semaphore's path differs from
	// the Semaphore's own, smaller or larger: processes must agree on the
	// limit. It comes before the acquisition waits or queues, never after a
	// wait for leases, and nothing is left on the server.
	ErrLimitMismatch = errs.ErrLimitMismatch

	// ErrWrongKind is returned at once by Mutex.Lock and TryLock,
	// ReentrantMutex.Lock and TryLock, the RWMutex methods that acquire,
	// Semaphore.Acquire and TryAcquire, and Election.Campaign and Run when
	// the path holds another kind of primitive's nodes: a Mutex's or an
	// Election's "lock-" nodes, an RWMutex's "__READ__" and "__WRIT__" nodes,
	// a Semaphore's "locks" and "leases" children, or the nodes of Curator's
	// LeaderLatch or Kazoo's ReadLock. Such primitives would not exclude
	// each other; use one kind of primitive per path. Mutex, ReentrantMutex
	// and Election share "lock-" nodes, with Curator's InterProcessMutex and
	// LeaderSelector and Kazoo's Lock, and refuse none of these. Each
	// checks the listing it makes just after creating its node, so of two
	// kinds that meet on a path the later one is refused (both may be, when
	// they arrive together), and a holder already there is not disturbed.
	// A semaphore's locks and leases nodes outlive its last lease until the
	// server reaps them. It is wrapped in a *WrongKindError naming what was
	// found, and nothing is left on the server.
	ErrWrongKind = errs.ErrWrongKind

	// ErrNotAcquired is returned by Semaphore.TryAcquire when the leases are
	// not free at once or other clients are queued for them.
	ErrNotAcquired = errs.ErrNotAcquired

	// ErrLeaseReleased is returned by Lease.Release when the lease was
	// already released.
	ErrLeaseReleased = errs.ErrLeaseReleased

	// ErrLeaseLost is returned by Lease.Release after the lease's loss signal
	// fired: the ownership deadline passed or the session expired, so the
	// leases may have been granted to others. The lease counts as released.
	ErrLeaseLost = errs.ErrLeaseLost

	// ErrNotRevocable is returned by Revoke for a zklock node whose holder
	// is not revocable (see WithRevocable) and whose node announces
	// releases, so that writing a request into it would let the waiter
	// behind it take the write for a release; and for a semaphore's lease,
	// which no semaphore would hear.
	ErrNotRevocable = errs.ErrNotRevocable

	// ErrHolderAlive is returned by Break, without force, when a holder's
	// node exists: its session is alive as far as ZooKeeper knows, and the
	// holder may be acting on the resource. It is wrapped in a
	// *HolderAliveError naming the holder.
	ErrHolderAlive = errs.ErrHolderAlive

	// ErrTimingUnknown is returned by NewSession when the servers run in
	// an ensemble and do not answer 'conf' (a stock ZooKeeper's
	// 4lw.commands.whitelist is srvr alone), and WithEnsembleTiming does
	// not state their timing: the ownership deadline rests on their
	// tickTime and syncLimit (docs/ownership.md). Its message names both
	// fixes: the zoo.cfg line 4lw.commands.whitelist=srvr,conf, or
	// WithEnsembleTiming.
	ErrTimingUnknown = errs.ErrTimingUnknown

	// ErrNotZooKeeper is returned by NewSession at once, not at the end
	// of its ctx, when every server answered in another protocol (an HTTP
	// server, such as ZooKeeper's AdminServer on 8080, instead of the
	// client port, 2181 by default): none of them will ever be ZooKeeper.
	// Its message names each address and what it answered. While any
	// server has not answered so (one that is down may come up),
	// NewSession keeps trying.
	ErrNotZooKeeper = errs.ErrNotZooKeeper
)

// Errors of ZooKeeper, as the server reports them, wrapped with the
// request and its path (test with errors.Is). Session.Client's requests,
// Session.Multi and the primitives return them; the primitives retry
// ErrConnectionLoss (and ErrSessionMoved) themselves.
var (
	// ErrNoNode: the node does not exist (for a create: its parent).
	ErrNoNode = client.ErrNoNode
	// ErrNodeExists: a create of a node that exists.
	ErrNodeExists = client.ErrNodeExists
	// ErrBadVersion: the node's version is not the one given (a Set,
	// Delete, SetDataOp, DeleteOp or CheckOp with a version).
	ErrBadVersion = client.ErrBadVersion
	// ErrNoAuth: the node's ACL does not grant the session the permission.
	ErrNoAuth = client.ErrNoAuth
	// ErrNotEmpty: a delete of a node that has children.
	ErrNotEmpty = client.ErrNotEmpty
	// ErrNoChildrenForEphemerals: a create under an ephemeral node.
	ErrNoChildrenForEphemerals = client.ErrNoChildrenForEphemerals
	// ErrInvalidACL: an empty ACL, an unknown scheme, or AuthACL from a
	// session that authenticated as nobody.
	ErrInvalidACL = client.ErrInvalidACL
	// ErrAuthFailed: the server rejected a credential (WithAuth,
	// WithDigestAuth). NewSession returns it; on a later reconnect it is
	// final: the session's ownership ends and its requests fail with it.
	ErrAuthFailed = client.ErrAuthFailed
	// ErrConnectionLoss: the connection was lost while the request was in
	// flight: whether the server performed it is unknown. A request made
	// while disconnected is not failed; it waits for a connection, or its
	// ctx.
	ErrConnectionLoss = client.ErrConnectionLoss
	// ErrSessionExpired: the session expired while the request waited for a
	// connection; it was not performed.
	ErrSessionExpired = client.ErrSessionExpired
	// ErrSessionMoved: the session is now served through another
	// connection; the request was not performed.
	ErrSessionMoved = client.ErrSessionMoved
	// ErrRolledBack is the OpResult.Err of each op of a failed
	// Session.Multi that did not fail itself: nothing was applied.
	ErrRolledBack = client.ErrRolledBack
	// ErrBadArguments: the server refused the request's arguments (a
	// path ZooKeeper does not accept, say); also returned before sending a
	// request whose path is not absolute.
	ErrBadArguments = client.ErrBadArguments
	// ErrUnimplemented: the server does not support the request.
	ErrUnimplemented = client.ErrUnimplemented
)

// HolderAliveError is returned, wrapping ErrHolderAlive, by Break without
// force.
type HolderAliveError struct {
	Holder Contender
}

// Error names the holder, its session and its age.
func (e *HolderAliveError) Error() string {
	return fmt.Sprintf("%v: %s held by session 0x%x since %s (data %q); break it only with force",
		ErrHolderAlive, e.Holder.Path, e.Holder.Session, e.Holder.Created.Format(time.RFC3339), e.Holder.Data)
}

// Unwrap returns ErrHolderAlive.
func (e *HolderAliveError) Unwrap() error { return ErrHolderAlive }

// WrongKindError is returned, wrapping ErrWrongKind, by a primitive that
// found another kind of primitive's nodes on its path: Path, the
// primitive's path; Node, the child that shows the other kind (a node
// name, "locks" or "leases"); Found, that kind: KindMutex (also an
// Election's or a ReentrantMutex's node, or Curator's or Kazoo's lock),
// KindRWMutexRead, KindRWMutexWrite, KindSemaphore (Curator's layout),
// KindSemaphorePermit (WithPermitLayout), KindCuratorLeaderLatch or
// KindKazooReadLock.
type WrongKindError = errs.WrongKindError

// LockedError is returned, wrapping ErrLocked, by TryLock (TryRLock) when
// another owner holds the lock: Holder, the holder's node name; Session,
// its session id (0 if unknown); Data, its node data (see WithData).
type LockedError = errs.LockedError
