package zklock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/zklock/zklock/internal/queue"
)

// This file holds what every primitive's handle shares: the queue it is
// built on, the state of a granted acquisition, and the listing of its
// contenders.

func newQueue(s *Session, path, kind string, accept []string, opts []Option) (queue.Queue, primitiveOptions, error) {
	if s == nil {
		return queue.Queue{}, primitiveOptions{}, fmt.Errorf("%w: nil session", ErrInvalidArgument)
	}
	if err := queue.CheckPath(path); err != nil {
		return queue.Queue{}, primitiveOptions{}, fmt.Errorf("%w: %v", ErrInvalidPath, err)
	}
	o, err := applyOptions(opts)
	if err != nil {
		return queue.Queue{}, o, err
	}
	if err := s.opts.checkCreate(queue.LongestNode(path, kind), len(o.data)+len(queue.Announcer)); err != nil {
		return queue.Queue{}, o, err
	}
	if o.queueLayout && kind != queue.KindLease {
		return queue.Queue{}, o, invalid("WithQueueLayout applies to a Semaphore only")
	}
	if o.cohort != nil && (o.revocable || o.maxHold > 0) {
		return queue.Queue{}, o, invalid("WithCohort cannot be combined with WithRevocable or WithMaxHold")
	}
	// A cohort writes its node's data to invalidate a guard, a revoker a
	// revocable holder's: such a node must not announce releases, or a
	// waiter would take that write for one.
	return queue.Queue{Conn: s.c, Dir: path, Kind: kind, Accept: accept, OneKind: true,
		Handoff: !o.listingHandoff, Quiet: o.cohort != nil, Revocable: o.revocable}, o, nil
}

// closedCh is returned as the loss signal of nothing held.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// acquisition is the granted state every lock handle exposes.
type acquisition struct {
	h     *queue.Held
	local int          // the grant's index among its cohort node's grants
	c     *cohort      // the cohort the hold is of, nil without WithCohort
	w     *watchedHold // WithRevocable, WithMaxHold; nil without
}

func (a acquisition) lost() <-chan struct{} {
	switch {
	case a.h == nil:
		return closedCh
	case a.w != nil && a.w.lost != nil && !closed(a.h.Epoch.Done):
		// The bound's goroutine closes w.lost at the epoch's end too, a
		// wake-up later: a hold asked after the epoch ended is lost now.
		return a.w.lost
	}
	return a.h.Epoch.Lost()
}

// closed reports whether ch is closed.
func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// revoked is the hold's revocation signal, nil when none can come.
func (a acquisition) revoked() <-chan struct{} {
	if a.w == nil {
		return nil
	}
	return a.w.revoked
}

// release ends the hold: it deletes the node, then stops the hold's
// watch. A hold whose bound passed (WithMaxHold) is lost: its node is
// deleted all the same, and ErrLockLost returned. A release that fails
// otherwise (ctx ended) keeps the hold, and its watch: the bound and the
// revocation watch still apply to it.
func (a acquisition) release(ctx context.Context, release func(context.Context, *queue.Held) error) error {
	err := mapQueueErr(release(ctx, a.h))
	if err != nil && !errors.Is(err, ErrLockLost) {
		return err
	}
	if a.w.end() && err == nil {
		return ErrLockLost
	}
	return err
}

func (a acquisition) token() int64 {
	if a.h == nil {
		return 0
	}
	return a.h.Token<<tokenShift | int64(a.local)
}

func (a acquisition) path() string {
	if a.h == nil {
		return ""
	}
	return a.h.Path
}

// guard is a multi-op that succeeds only while our node exists (version -1
// matches any data version). Our node's name is unique, so it existing means
// we still hold.
func (a acquisition) guard() *CheckOp {
	if a.h == nil {
		return nil
	}
	return &CheckOp{Path: a.h.Path, Version: -1}
}

// Contender describes one node in a lock's queue, as returned by the
// Contenders methods: the holder (or holders) first, then the waiters in the
// order they will be granted.
type Contender struct {
	Path    string    // full node path
	Kind    string    // "lock-", "__READ__", "__WRIT__", "lease-", ...
	Seq     int32     // sequence number assigned by the server
	Session int64     // owning session id
	Token   int64     // the fencing token of the node's first grant (see Mutex.Token)
	Created time.Time // creation time on the server
	Data    []byte    // node data: "host:pid" unless set with WithData
}

func listContenders(ctx context.Context, q *queue.Queue) ([]Contender, error) {
	if err := checkCtx(ctx); err != nil {
		return nil, err
	}
	entries, err := q.List(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]Contender, len(entries))
	for i, e := range entries {
		out[i] = Contender{
			Path:    q.Dir + "/" + e.Name,
			Kind:    e.Kind,
			Seq:     e.Seq,
			Session: e.Stat.EphemeralOwner,
			Token:   e.Stat.Czxid << tokenShift,
			Created: time.UnixMilli(e.Stat.Ctime),
			Data:    e.Data,
		}
	}
	return out, nil
}

// checkCtx rejects a nil or already finished ctx before anything is sent.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return ErrNilContext
	}
	return ctx.Err()
}

// holder is the dialect every held acquisition speaks: the loss signal, the
// fencing token, the guard for Session.Multi and our node, under the same
// names everywhere.
type holder interface {
	Lost() <-chan struct{}
	Token() int64
	Guard() *CheckOp
	Node() string
}

var _ = []holder{(*Mutex)(nil), (*ReentrantMutex)(nil), (*RWMutex)(nil), (*Lease)(nil), (*Term)(nil)}
