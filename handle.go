package zklock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// This file is what every primitive's facade shares: its description for
// the hold engine (spec), the queue and line its constructor builds from
// its options, and the listing of its contenders.

// spec describes a primitive to the engine.
type spec struct {
	kind   Kind       // in metrics and errors
	node   string     // its nodes' kind on the wire (queue.KindLock, ...)
	accept []string   // the node kinds that share its queue
	takes  takes      // the options it takes; the others are refused
	quiet  bool       // its nodes never announce a release (an election's value)
	errs   *hold.Errs // what its Release returns; nil: ErrLockLost, ErrNotLocked
}

// lockKinds are the node kinds of the exclusive queue that a Mutex, a
// ReentrantMutex and an Election's candidates share (Kazoo's lock nodes
// among them); lockTakes the options its locks take.
var lockKinds = []string{queue.KindLock, queue.KindKazooLock}

const lockTakes = takesCohort | takesRevocable | takesMaxHold

// takes is a set of options a primitive takes.
type takes uint8

const (
	takesCohort takes = 1 << iota
	takesRevocable
	takesMaxHold
	takesPermits
	takesSeq // WithSequenceLayout
)

// build checks the arguments every constructor gets and returns the
// primitive's queue with its options. A pair of primitive and option that
// cannot be made safe is refused here, with ErrInvalidArgument and the
// reason (docs/recipes.md, "What happens when...").
func build(s *Session, path string, sp spec, opts []Option) (*queue.Queue, primitiveOptions, error) {
	q, o, err := buildQueue(s, path, sp, opts)
	if err != nil {
		return nil, o, err
	}
	return &q, o, nil
}

// buildQueue is build with the queue as a value, for a handle that keeps
// it in place.
func buildQueue(s *Session, path string, sp spec, opts []Option) (queue.Queue, primitiveOptions, error) {
	if err := checkSession(s); err != nil {
		return queue.Queue{}, primitiveOptions{}, err
	}
	if err := queue.CheckPath(path); err != nil {
		return queue.Queue{}, primitiveOptions{}, fmt.Errorf("%w: %v", errs.ErrInvalidPath, err)
	}
	o, err := applyOptions(opts)
	if err != nil {
		return queue.Queue{}, o, err
	}
	if err := o.refuse(sp); err != nil {
		return queue.Queue{}, o, err
	}
	if err := s.opts.checkCreate(queue.LongestNode(path, sp.node), len(o.data)+queue.LongestTag); err != nil {
		return queue.Queue{}, o, err
	}
	return queue.Queue{Conn: s.conn(), Dir: path, Rules: rules(sp, o)}, o, nil
}

// seqKinds are the contenders of a Mutex WithSequenceLayout: its own
// nodes only.
var seqKinds = []string{queue.KindSeqLock}

// rulesKey is what makes a queue's rules.
type rulesKey struct {
	node, accept              string
	handoff, quiet, revocable bool
}

// allRules are the queues' rules by rulesKey: a handle keeps a pointer to
// its queue's, not their 48 bytes (a service may hold many handles).
var allRules sync.Map

// rules returns the rules of sp's queue with options o. Those of a permit
// semaphore, whose node kind says its limit, are its own: the set of keys
// stays small.
func rules(sp spec, o primitiveOptions) *queue.Rules {
	// A cohort writes its node's data to invalidate a guard, a revoker a
	// revocable holder's: such a node must not announce releases, or a
	// waiter would take that write for one.
	node, accept := sp.node, sp.accept
	if o.seqLayout {
		node, accept = queue.KindSeqLock, seqKinds
	}
	r := &queue.Rules{Kind: node, Accept: accept, OneKind: true,
		Handoff: !o.listingHandoff, Quiet: sp.quiet || o.cohort != nil, Revocable: o.revocable}
	if o.permits {
		return r
	}
	k := rulesKey{node, strings.Join(accept, "/"), r.Handoff, r.Quiet, r.Revocable}
	got, _ := allRules.LoadOrStore(k, r)
	return got.(*queue.Rules)
}

// refuse returns the error of an option sp does not take, or of a pair of
// options that do not go together.
func (o primitiveOptions) refuse(sp spec) error {
	switch {
	case o.cohort != nil && sp.takes&takesCohort == 0:
		return invalid("WithCohort applies to Mutex and ReentrantMutex only")
	case o.revocable && sp.takes&takesRevocable == 0:
		return invalid("WithRevocable applies to Mutex, ReentrantMutex and RWMutex only")
	case o.maxHold > 0 && sp.takes&takesMaxHold == 0:
		return invalid("WithMaxHold applies to Mutex, ReentrantMutex and RWMutex only")
	case o.permits && sp.takes&takesPermits == 0:
		return invalid("WithPermitLayout applies to a Semaphore only")
	case o.seqLayout && sp.takes&takesSeq == 0:
		return invalid("WithSequenceLayout applies to a Mutex only")
	case o.seqLayout && (o.cohort != nil || o.revocable || o.maxHold > 0 || o.listingHandoff):
		// Not yet shown safe together: a cohort's and a revoker's writes
		// to the node, and the listing handoff, are the default layout's.
		return invalid("WithSequenceLayout cannot be combined with WithCohort, WithRevocable, WithMaxHold or WithListingHandoff")
	case o.cohort != nil && (o.revocable || o.maxHold > 0):
		// A cohort's holds share a node that outlives each: a bound or a
		// revocation of one would end the others' too.
		return invalid("WithCohort cannot be combined with WithRevocable or WithMaxHold")
	}
	return nil
}

// line returns the primitive's Line on q, and the Acquirer its handles
// acquire through: the Line, or with WithCohort the session's cohort of
// q's path.
func (s *Session) line(q *queue.Queue, p hold.Protocol, sp spec, o primitiveOptions) (*hold.Line, hold.Acquirer) {
	l := new(hold.Line)
	return l, s.lineAt(l, q, p, sp, o)
}

// lineAt is line that fills in l, a field of the handle: a Mutex is one
// allocation with its queue and line (a service may hold many).
func (s *Session) lineAt(l *hold.Line, q *queue.Queue, p hold.Protocol, sp spec, o primitiveOptions) hold.Acquirer {
	*l = hold.Line{P: p, Q: q, Conf: s.conf(sp, o)}
	if o.cohort == nil {
		return l
	}
	form := func() *hold.Cohort { return hold.NewCohort(l, q, o.data, *o.cohort) }
	return hold.CohortLine{R: &s.cohorts, Path: q.Dir, Form: form}
}

// confKey is what makes a line's hold.Conf, but a bound (WithMaxHold).
type confKey struct {
	kind      Kind
	revocable bool
	errs      *hold.Errs
	metrics   *metricsState
}

// conf returns the hold.Conf of a line of sp with options o: one for all
// such lines of the session, so that a handle keeps a pointer to it, not
// its 88 bytes (a service may hold many handles). A line with a bound or
// its own data (WithData) has its own: those are any durations and bytes,
// and the set of keys stays small.
func (s *Session) conf(sp spec, o primitiveOptions) *hold.Conf {
	c := &hold.Conf{Kind: errs.Kind(sp.kind), Errs: sp.errs, Data: o.data,
		Layers: hold.Layers{MaxHold: o.maxHold, Revocable: o.revocable, OnRevoke: o.onRevoke}}
	if s.metrics != nil {
		c.Events = s.metrics
	}
	if o.maxHold > 0 || o.ownData || o.revocable { // a listener is the handle's own
		return c
	}
	got, _ := s.confs.LoadOrStore(confKey{sp.kind, o.revocable, sp.errs, s.metrics}, c)
	return got.(*hold.Conf)
}

// Contender describes one node in a queue, as Contenders, WatchLock and
// Break return it.
type Contender struct {
	Path    string    // full node path
	Kind    Kind      // the kind of primitive the node is of: KindMutex, KindRWMutexRead, ...
	Seq     int32     // sequence number assigned by the server
	Session int64     // owning session id
	Token   int64     // the fencing token of the node's first grant (see Mutex.Token)
	Created time.Time // creation time on the server
	Data    []byte    // node data: "host:pid" unless set with WithData
	Holds   bool      // it holds (a lock's holder, a semaphore's lease within the limit), or waits
}

// contender describes e, a node of the queue at dir.
func contender(dir string, e queue.Entry) Contender {
	return Contender{
		Path:    dir + "/" + e.Name,
		Kind:    Kind(queue.KindOf(e.Contender)),
		Seq:     e.Seq,
		Session: e.Stat.EphemeralOwner,
		Token:   e.Stat.Czxid << hold.TokenShift,
		Created: time.UnixMilli(e.Stat.Ctime),
		Data:    e.Data,
	}
}

// checkCtx rejects a nil or finished ctx before anything is sent.
var checkCtx = hold.CheckCtx

// closedCh is the loss signal of nothing held.
var closedCh = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

// Part is one hold of a MultiLock: a *Mutex, a *ReentrantMutex, an
// *RWMutex (its write lock), RWMutex.ReadPart (a read lock of it) or a
// *Semaphore (one lease of it), as in NewMultiLock(m, rw.ReadPart(), sem).
// Only zklock's handles are Parts.
type Part interface {
	part() hold.Part // the zero hold.Part for a nil or zero handle: NewMultiLock refuses it
}

// slotPart is the Part of a handle whose hold is its slot's: the MultiLock
// locks the slot and unlocks the very hold it placed there (Slot.Take,
// Slot.Give), not whatever the slot holds by then: other goroutines may
// share the handle, and unlock and lock it again meanwhile.
func slotPart(path string, key any, s *hold.Slot, data []byte) hold.Part {
	return hold.Part{Path: path, Key: key,
		Acquire: func(ctx context.Context) (*hold.Hold, error) { return s.Take(ctx, queue.Request{Data: data}) },
		Release: s.Give, Stands: s.Stands}
}

// noGuard is the guard of a MultiLock or Lease that holds nothing: one nil
// check, which zk.Client.Multi refuses, so that writes appended to it never
// commit (an empty slice would send the writes alone: the review of issue
// 43 committed one while a rival held).
func noGuard() []zk.Op { return []zk.Op{(*zk.CheckOp)(nil)} }

// checkOp is the multi-op of a guard.
func checkOp(g *hold.Guard) *zk.CheckOp {
	if g == nil {
		return nil
	}
	return &zk.CheckOp{Path: g.Path, Version: g.Version}
}

// named names path in the error of a blocking call that ended because its
// ctx did (what says "context deadline exceeded" alone leaves a program
// that waits on several locks guessing which one), with call, what it was
// doing ("lock", "campaign"), once: errors.Is still finds ctx's error. Any
// other error is returned as it is.
func named(ctx context.Context, call, path string, err error) error {
	if err == nil || ctx == nil || ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		return err
	}
	return fmt.Errorf("zklock: %s %s: %w", call, path, err)
}

// unmade is the error of an acting method of a handle its constructor did
// not make (its zero value, or a nil pointer): misuse, reported as os.File's
// methods on a nil *File report os.ErrInvalid, not as a nil dereference
// deep in the engine. Each handle tests for it with one comparison (a field
// only its constructor sets), before anything else.
func unmade(typ, maker string) error {
	return fmt.Errorf("%w: zero %s: make it with %s", ErrInvalidArgument, typ, maker)
}
