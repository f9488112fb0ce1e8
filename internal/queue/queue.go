// Package queue is the one ZooKeeper queue algorithm every zklock primitive
// shares: protected creation of an ephemeral sequential node, ordering of the
// contenders, finding the node that blocks us, watching only that node, the
// ownership check against the current session, and cleanup on every exit.
package queue

import (
	"bytes"
	"context"
	"errors"
	"strings"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/session"
)

// Epoch is the session's ownership epoch (see session.Epoch).
type Epoch = session.Epoch

// EpochInfo is what an Epoch says (see session.EpochInfo).
type EpochInfo = session.EpochInfo

// Tracked is a node the session deletes when its epoch ends (see
// session.Tracked and Conn.Track).
type Tracked = session.Tracked

// Conn is what the queue needs from a session. Reads and deletes retry
// transient errors within ctx; CreateSeq sends exactly one request. Errors
// from ZooKeeper wrap internal/client's sentinels (client.ErrNoNode, ...):
// client.ErrConnectionLoss for a request whose outcome is unknown,
// client.ErrSessionExpired for one that waited for a connection until its
// session expired (it was not applied).
type Conn interface {
	// Epoch waits for a live epoch.
	Epoch(ctx context.Context) (Epoch, error)
	// CreateSeq creates an EPHEMERAL_SEQUENTIAL node and returns its path, its
	// czxid and the session that owns it. If ctx ends while the request is in
	// flight, the Conn removes the node, should it appear, in the background.
	CreateSeq(ctx context.Context, path string, data []byte) (string, int64, int64, error)
	// CreateAndList is CreateSeq with a listing of the node's parent
	// pipelined behind the create on the same connection: ZooKeeper answers
	// a session's requests in order, so the listing reflects the create at
	// no extra round trip. names is nil when the listing failed or was not
	// sent; the caller then lists again. parents are the CONTAINER nodes
	// the create needs (the lock path and its ancestors): the Conn creates
	// those it does not know to exist, pipelined ahead of the create in the
	// same way, so that a lock on a fresh path costs no more round trips
	// than on an existing one. A parent it took for existing may have been
	// reaped: the create then fails with NoNode, and a retry creates it.
	// When the create finds no parent because a parent create failed, err
	// is that one's error. parent is the parent's czxid, from the same
	// reply as names (0 when names is nil).
	CreateAndList(ctx context.Context, parents []string, path string, data []byte) (name string, czxid, owner int64, names []string, parent int64, err error)
	// CreateAndStat is CreateAndList with the parent's child count, from
	// an exists request pipelined behind the create, in place of its
	// listing; children is -1, and parent 0, when they are not known.
	CreateAndStat(ctx context.Context, parents []string, path string, data []byte) (name string, czxid, owner int64, children int32, parent int64, err error)
	// KnownCzxid returns the czxid of dir, the last of dirs (the lock
	// path's ancestors, then the path), as the session's replies last told
	// it (CreateAndList, CreateAndStat, ReadCzxid), reading it when none
	// did, after creating dirs (CONTAINER nodes) if it is missing: one
	// read shared by the calls that find it unknown at once. A hint,
	// possibly stale.
	KnownCzxid(ctx context.Context, dirs []string) (int64, error)
	// ReadCzxid reads dir's czxid (0: dir does not exist), with a request
	// sent after the caller's earlier ones, and remembers it for
	// KnownCzxid.
	ReadCzxid(ctx context.Context, dir string) (int64, error)
	// Exist reports whether each of paths exists, its requests sent as one
	// pipeline, without watches.
	Exist(ctx context.Context, paths []string) ([]bool, error)
	// CreateContainer creates a CONTAINER node; an existing one is fine.
	CreateContainer(ctx context.Context, path string) error
	Children(ctx context.Context, path string) ([]string, error)
	// Stat returns the node's stat, or nil if it does not exist.
	Stat(ctx context.Context, path string) (*client.Stat, error)
	Get(ctx context.Context, path string) ([]byte, *client.Stat, error)
	// Delete deletes path; a missing node counts as deleted.
	Delete(ctx context.Context, path string) error
	// DeleteUntil is Delete that also gives up, with an error, once ep
	// ends.
	DeleteUntil(ctx context.Context, path string, ep Epoch) error
	// ReleaseUntil is DeleteUntil that announces the release: one multi
	// sets the node's data, then deletes it, so a watcher of its data sees
	// NodeDataChanged, which a plain deletion never causes (see Released).
	ReleaseUntil(ctx context.Context, path string, ep Epoch) error
	// ReleaseOwnUntil is ReleaseUntil for a node whose name no other node
	// has had since its create (Seq): a node missing at the first attempt
	// is an error wrapping client.ErrNoNode; at a retry after a connection
	// loss, deleted.
	ReleaseOwnUntil(ctx context.Context, path string, ep Epoch) error
	// Discard deletes an ephemeral node of session sid: now if it can, and
	// in the background until it is gone or the session is otherwise.
	Discard(path string, sid int64)
	// WaitChange blocks until path changes or is deleted (Deleted at once
	// if it does not exist), or ctx ends. It may also return LookAgain
	// without a change: when the session's ownership epoch ends, or its
	// connection is lost or restored (a watch restored after a reconnect
	// is not trusted alone: the server may refuse to restore it), so
	// callers look again.
	WaitChange(ctx context.Context, path string) (Change, error)
	// WaitData is WaitChange for a caller that read the node's data at
	// version and must not miss a later write: a write made after that
	// read and before the watch was set returns LookAgain at once, where
	// WaitChange would wait for the next one. Deleted if the node is gone.
	WaitData(ctx context.Context, path string, version int32) (Change, error)
	// ReadWatch reads path's data and sets a data watch on it with one
	// request, so that no write after the read is missed; ok is false,
	// with no watch, if the node does not exist. wait blocks until the
	// watch fires, as WaitChange does: Deleted, Released (the data changed
	// and the data read marks the node's writes as proofs: Announces), or
	// LookAgain (another change, a session state change, the epoch's
	// end), or until ctx ends. wait is called at most once.
	ReadWatch(ctx context.Context, path string) (data []byte, ok bool, wait func(context.Context) (Change, error), err error)
	// Track arranges for t's node to be deleted when ep, its node's epoch,
	// ends; false if ep has already ended. Untrack undoes it. The Conn keeps
	// t until then: a Held's own (see Tracked).
	Track(ep Epoch, t *Tracked) bool
	Untrack(ep Epoch, t *Tracked)

	// CreateEphemeral creates a non-sequential EPHEMERAL node and returns its
	// czxid and the session that owns it. It sends exactly one request.
	CreateEphemeral(ctx context.Context, path string, data []byte) (int64, int64, error)
	// ChildrenStat lists path's children with path's stat.
	ChildrenStat(ctx context.Context, path string) ([]string, *client.Stat, error)
	// ChildrenW is ChildrenStat that also leaves a child watch: the channel
	// receives one event when the children change, or when the watch may
	// have ended: the session's state changed (a watch restored after a
	// reconnect is not trusted alone), expired or closed. The caller then
	// lists again.
	ChildrenW(ctx context.Context, path string) ([]string, *client.Stat, <-chan client.Event, error)
	// StopChildren gives up the watch of a ChildrenW whose event ch the
	// caller will not wait for, and that nothing of the caller's will fire
	// (its nodes in path are gone): ch is forgotten and, once no other
	// caller of the session waits on path, the session's child watch is
	// removed from the server (removeWatches, in the background). Without
	// it the watch of a directory that never changes again stays until the
	// session ends.
	StopChildren(path string, ch <-chan client.Event)
	// WaitExists blocks until path exists (nil at once if it does) or ctx
	// ends; it may also return nil when the session's state changes, for
	// the caller to look again.
	WaitExists(ctx context.Context, path string) error
	// SetData sets path's data if its version is version (-1: any).
	SetData(ctx context.Context, path string, data []byte, version int32) error
	// Go runs f on a goroutine the session's Close waits for; ctx ends when
	// Close begins. It returns false, without running f, once Close has
	// begun.
	Go(f func(ctx context.Context)) bool
}

// Queue is a lock path and the kind of node this contender creates there.
// A service may hold many handles, each with its queue, so what a queue
// says beyond its path (Rules) is a pointer, which queues of one kind
// share.
type Queue struct {
	Conn Conn
	Dir  string // the lock path: parent of the contenders
	*Rules
}

// Rules are what a contender of a queue is and does. Queues may share one:
// it must not change once a Queue has it.
type Rules struct {
	Kind   string   // our node kind
	Accept []string // kinds that are contenders in this queue
	// OneKind refuses a path that holds another primitive's nodes (see
	// Foreign): Acquire then fails with a *errs.WrongKindError.
	OneKind bool
	// Handoff is the listing-free handoff: an exclusive holder announces
	// its release (Conn.ReleaseUntil), and a waiter takes the announcement
	// for proof that it may hold (see Queue.proves). An announcing node
	// says so in its data (Announcer), so a waiter trusts a data change
	// only on such a node: not on a Curator or Kazoo node, nor on a zklock
	// node whose own holder writes its data (Quiet). It is sound only while
	// nothing but a release changes an announcing node's data.
	Handoff bool
	// Quiet: our node never announces its release, because its holder may
	// change its data while it holds (a cohort's guard, a revocation) or
	// because its data must be exactly the caller's (an election's value,
	// which Curator reads as a participant id).
	Quiet bool
	// Revocable: our node's holder listens for revocation requests written
	// into its data; its data is tagged (RevocableTag) so that a revoker
	// can tell. A revocable node is quiet.
	Revocable bool
}

// TagPrefix begins every tag zklock appends to a node's data (Announcer,
// RevocableTag, PermitTag): a NUL byte and "zklock:". Data from the user
// must not hold it (Reserved): a tag is protocol state, which a waiter or
// a revoker trusts, and data that ended in one would forge it on a node
// whose data zklock keeps verbatim (a cohort's, an election candidate's).
const TagPrefix = "\x00zklock:"

// Reserved reports whether data holds TagPrefix, which only zklock writes.
func Reserved(data []byte) bool { return bytes.Contains(data, []byte(TagPrefix)) }

// RevokeMessage is the data a revoker writes into a revocable holder's
// node: Curator's Revoker.revocationRequested, which Curator's revocable
// locks, and zklock's, listen for.
const RevokeMessage = "__REVOKE__"

// RevocableTag ends the data of a revocable holder's node.
const RevocableTag = TagPrefix + "r"

// Announcer ends the data of a node whose holder announces its release
// (Queue.Handoff): a NUL byte and a tag no Curator or Kazoo node carries.
// Readers of node data (List, a LockedError) strip it.
const Announcer = TagPrefix + "a"

// announces reports whether node data marks an announcing node.
func announces(data []byte) bool { return bytes.HasSuffix(data, []byte(Announcer)) }

// Announces reports whether node data marks a node whose data changes are
// proofs a watcher may act on without looking: an announcing node's (its
// release) or a permit node's (a rank it publishes: see Permits).
func Announces(data []byte) bool {
	_, permit := permitTag(data)
	return announces(data) || permit
}

// UserData returns node data without the tag zklock added to it.
func UserData(data []byte) []byte {
	for _, tag := range []string{Announcer, RevocableTag} {
		if bytes.HasSuffix(data, []byte(tag)) {
			return stripSeqToken(data[:len(data)-len(tag)])
		}
	}
	if i, ok := permitTag(data); ok {
		return data[:i]
	}
	return stripSeqToken(data)
}

// Change is what Conn.WaitChange saw happen to the node it watched (see
// session.Change).
type Change = session.Change

// The changes a wait reports.
const (
	LookAgain = session.LookAgain
	Deleted   = session.Deleted
	Released  = session.Released
)

// Blocks reports whether a contender ahead of ours keeps us waiting. We
// wait for the nearest contender ahead of ours that blocks us, and hold
// when none does. nil is the mutex rule: every contender ahead blocks, so
// we wait for the one directly ahead of us and hold when first.
type Blocks func(c Contender) bool

// Held is a granted place in the queue. A service may hold many at once,
// so it keeps only what its node's path does not say (Node parses that).
type Held struct {
	Tracked       // Path: the full path of our node; the session's tracking
	Token   int64 // the node's czxid: the fencing token
	Epoch   Epoch
	// Waited reports that another contender blocked us at first: the queue
	// was contended.
	Waited bool
}

// Node returns our node as a contender: its name (the tail of Path), kind
// and sequence number.
func (h *Held) Node() Contender {
	c, _ := Parse(h.Path[strings.LastIndexByte(h.Path, '/')+1:])
	return c
}

// Request says how to acquire.
type Request struct {
	Data   []byte
	Blocks Blocks // nil: the mutex rule
	Try    bool   // do not wait: fail with *errs.LockedError (leases, permits: errs.ErrNotAcquired)
	N      int    // leases or permits to take at once (1 if 0)
}

// errGone reports that our node vanished while we waited: the session
// expired (taking its ephemerals) or somebody deleted it.
var errGone = errors.New("queue: our node is gone")

// Acquire enqueues and waits until no contender ahead of ours blocks us
// (r.Blocks), ctx ends, or an error occurs. On any failure our node is
// removed before returning (or, when the server cannot be reached, in the
// background). If the session expires while we wait, we re-enqueue under
// the new session until ctx ends.
func (q *Queue) Acquire(ctx context.Context, r Request) (*Held, error) {
	for {
		n, err := q.create(ctx, r.Data, true)
		if err != nil {
			return nil, err
		}
		h, err := q.wait(ctx, n, r)
		if err == nil {
			return h, nil
		}
		q.Conn.Discard(n.path, n.owner)
		if !errors.Is(err, errGone) {
			return nil, err
		}
	}
}

// wait re-lists the queue whenever the node blocking us changes.
func (q *Queue) wait(ctx context.Context, n node, r Request) (*Held, error) {
	names := n.listing // taken with the create, when it was
	for waited := false; ; waited = true {
		if names == nil {
			var err error
			names, err = q.Conn.Children(ctx, q.Dir)
			if errors.Is(err, client.ErrNoNode) {
				// The lock path was reaped (a CONTAINER goes once empty): our
				// node is gone too, with an expired session.
				return nil, errGone
			}
			if err != nil {
				return nil, err
			}
		}
		if !waited && q.OneKind {
			if err := q.checkKinds(names); err != nil {
				return nil, err
			}
		}
		sc, ok := Scan(names, n.name, r.Blocks, q.Accept...)
		if !ok {
			return nil, errGone
		}
		if !sc.Blocked {
			h, err := q.grant(ctx, n)
			if h != nil {
				h.Waited = waited
			}
			return h, err
		}
		if r.Try {
			return nil, q.locked(ctx, sc, r.Blocks)
		}
		ch, err := q.Conn.WaitChange(ctx, q.Dir+"/"+sc.Blocker.Name)
		if err != nil {
			return nil, err
		}
		if q.proves(ch, sc) {
			h, err := q.grant(ctx, n)
			if h != nil {
				h.Waited = true
			}
			return h, err
		}
		names = nil
	}
}

// proves reports whether what happened to the contender that blocked us
// proves that nothing ahead of ours blocks us any more, so that we hold
// without listing the queue again: the listing is the one request on a
// busy lock's handoff whose size grows with the queue.
//
// Two facts carry the proof. The contenders ahead of ours were all in the
// listing sc came from, and the set can only shrink: the server numbers a
// new node above every existing one. (A writer's downgrade is the one
// exception: its read node takes the writer's number, below a writer
// queued behind it, so a writer relies on the set only when no writer was
// ahead of it.) And an exclusive
// holder (a lock or write node) was granted only with nothing ahead of it.
//
//   - Deleted: the only contender ahead of ours that blocked us is gone.
//     A writer trusts this only when that contender was not a writer: a
//     read node can appear ahead of us only by a writer's downgrade, at
//     that writer's number, so with no writer ahead the set did shrink.
//   - Released: an exclusive holder released, so nothing was ahead of it,
//     and it was the nearest contender ahead of ours that blocks us, so
//     nothing between it and us does.
func (q *Queue) proves(ch Change, sc Scanned) bool {
	switch ch {
	case Deleted:
		return sc.Blockers == 1 && (q.Kind != KindWrite || sc.Blocker.Kind != KindWrite)
	case Released:
		return q.Handoff && exclusive(sc.Blocker.Kind)
	}
	return false
}

// exclusive reports whether a contender of kind holds only when first in
// the queue. Kazoo's lock nodes are, but Kazoo never announces a release,
// so a change of their data is somebody else's write, never a proof.
func exclusive(kind string) bool { return kind == KindLock || kind == KindWrite || kind == KindSeqLock }

// checkKinds refuses a listing that shows another kind of primitive on our
// path. Only the listing taken just after our create is checked, at no
// extra request: every node created before ours is in it, and a node of
// another kind created after ours is refused by its own first listing,
// which shows ours. So of two kinds that meet on a path one at least is
// refused, and one that was there first and waits is never refused because
// of a later arrival.
func (q *Queue) checkKinds(names []string) error {
	if c, ok := Foreign(names, q.Accept); ok {
		return WrongKind(q.Dir, c)
	}
	return nil
}

// grant claims the lock only if our node belongs to the session of a live
// epoch: the listing just confirmed the node exists, and a node of an
// earlier session must never be taken for ours (CURATOR-604).
func (q *Queue) grant(ctx context.Context, n node) (*Held, error) {
	ep, err := q.Conn.Epoch(ctx)
	if err != nil {
		return nil, err
	}
	h := &Held{Tracked: Tracked{Path: n.path}, Token: n.czxid, Epoch: ep}
	if ep.SessionID != n.owner || !q.Conn.Track(ep, &h.Tracked) {
		return nil, errGone
	}
	return h, nil
}

// Release deletes our node. It retries until the delete succeeds, ctx ends,
// or the epoch ends (then the session's own cleanup deletes the node if the
// session survived, and errs.ErrLockLost is returned). With Handoff, the release of
// an exclusive node that had to wait is announced (see Released), so the
// waiter behind it holds without listing the queue. One granted at once
// is deleted plainly, which costs the server less: a waiter that queued
// behind it since saw it as the only contender ahead, and holds at its
// deletion without a listing all the same (see proves); the waiters
// further back watch that waiter, whose own release, after a wait, is
// announced.
func (q *Queue) Release(ctx context.Context, h *Held) error {
	return q.release(ctx, h, q.Handoff && !q.Quiet && !q.Revocable && exclusive(h.Node().Kind) && h.Waited)
}

// Leave is Release without the announcement, for a node whose holder keeps
// something in the queue that a waiter must still see: a writer that
// downgraded keeps its read node.
func (q *Queue) Leave(ctx context.Context, h *Held) error { return q.release(ctx, h, false) }

func (q *Queue) release(ctx context.Context, h *Held, announce bool) error {
	select {
	case <-h.Epoch.Done:
		return errs.ErrLockLost
	default:
	}
	// Stop retrying once the node went (or will go) with the epoch.
	del := q.Conn.DeleteUntil
	if announce {
		del = q.Conn.ReleaseUntil
	}
	err := del(ctx, h.Path, h.Epoch)
	if err == nil {
		q.Conn.Untrack(h.Epoch, &h.Tracked)
		return nil
	}
	select {
	case <-h.Epoch.Done:
		return errs.ErrLockLost
	default:
		return err
	}
}
