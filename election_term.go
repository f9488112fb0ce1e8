package zklock

import (
	"context"
	"sync"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/hold"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// Term is one stretch of leadership: it begins when Campaign returns it and
// ends when Lost is closed, which happens at the first of
//   - the session's ownership deadline (see Session.OwnershipDeadline),
//     before the server can expire the session and elect another candidate;
//   - session expiry or Close;
//   - the deletion of our node by anyone else while the session lives;
//   - Resign.
//
// Once Lost is closed the candidate must assume it no longer leads. A Term
// never restarts; campaigning again yields a new Term with a larger Token.
// Its methods are safe for concurrent use. A zero Term is over: its Err is
// ErrInvalidArgument.
//
// Run's fn gets a context that ends with the term. After Campaign, make one
// the same way (context.Cause(work) is then Err):
//
//	work, cancel := context.WithCancelCause(ctx)
//	defer cancel(nil)
//	go func() {
//		select {
//		case <-term.Lost():
//			cancel(term.Err())
//		case <-work.Done():
//		}
//	}()
type Term struct {
	token int64
	node  string

	closed func() bool // whether the session was closed: the end's reason then

	done chan struct{}
	once sync.Once
	mu   sync.Mutex
	err  error
}

// newTerm starts the term of h, with goroutines (owned by the session, so
// Close waits for them) that end it when h's epoch ends or our node is
// deleted while the session lives (by hand, say): then the next candidate
// leads.
func newTerm(conn queue.Conn, h *hold.Hold, closed func() bool) *Term {
	t := &Term{token: h.Token(), node: h.Node(),
		closed: closed, done: make(chan struct{})}
	lost := h.Epoch().Done
	// The epoch ends at Close too, before the session waits for its
	// goroutines, so the first one always ends, and cancels the second.
	ctx, cancel := context.WithCancel(context.Background())
	if !conn.Go(func(context.Context) {
		defer cancel()
		select {
		case <-lost:
			t.end(t.lossErr())
		case <-t.done:
		}
	}) {
		cancel()
		t.end(t.lossErr()) // the session is closing: its epoch is over
		return t
	}
	conn.Go(func(context.Context) { t.watchNode(ctx, conn) })
	return t
}

// watchNode ends the term if our node disappears, until ctx ends.
func (t *Term) watchNode(ctx context.Context, conn queue.Conn) {
	for ctx.Err() == nil {
		if _, err := conn.WaitChange(ctx, t.node); err != nil {
			return // ctx ended or the session closed: the epoch ends the term
		}
		st, err := conn.Stat(ctx, t.node)
		if err == nil && st == nil {
			t.end(t.lossErr())
			return
		}
		if err != nil {
			return
		}
	}
}

// errTermClosed ends a term whose session was closed. It is
// ErrSessionClosed, which says why, and ErrLockLost, which code that
// handles every loss of a term alike tests for.
var errTermClosed error = termClosedError{}

type termClosedError struct{}

func (termClosedError) Error() string { return "zklock: session closed: the term ended with it" }

func (termClosedError) Is(target error) bool {
	return target == ErrSessionClosed || target == ErrLockLost || target == errs.ErrLeadershipLost
}

// lossErr is why the term ended without Resign: errTermClosed once the
// session was closed (Close ends the epoch, so this is asked after),
// errs.ErrLeadershipLost (an ErrLockLost) otherwise.
func (t *Term) lossErr() error {
	if t.closed != nil && t.closed() {
		return errTermClosed
	}
	return errs.ErrLeadershipLost
}

// end ends the term with err; only the first call counts.
func (t *Term) end(err error) {
	t.once.Do(func() {
		t.mu.Lock()
		t.err = err
		t.mu.Unlock()
		close(t.done)
	})
}

// Lost returns a channel that is closed when the term ends: leadership may
// have been lost (ownership deadline, expiry, Close, our node deleted) or
// was resigned; Err says which. Like every hold's Lost, it is closed once
// nothing is held.
func (t *Term) Lost() <-chan struct{} {
	if t == nil || t.done == nil { // a zero or nil Term: not Campaign's, over (Err)
		return closedCh
	}
	return t.done
}

// Err returns nil while the term lasts, then why it ended: ErrLockLost,
// ErrResigned, or after Session.Close an error for which both
// errors.Is(err, ErrSessionClosed) and errors.Is(err, ErrLockLost)
// hold.
func (t *Term) Err() error {
	if t == nil || t.done == nil {
		return unmade("Term", "Election.Campaign")
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.err
}

// Token returns the term's fencing token, made from the creation zxid of
// our node as Mutex.Token's is. Tokens strictly increase over successive terms of an election, whoever
// leads them, even when the election's parent node was reaped and
// re-created; a resource that remembers the largest token it has seen can
// reject a deposed leader.
func (t *Term) Token() int64 {
	if t == nil {
		return 0
	}
	return t.token
}

// Guard returns a ZooKeeper check operation that succeeds only while our
// node exists (its Path is our candidate node's). Put it first in
// zk.Client.Multi so the other writes commit only while this candidate is
// still first in the queue. A Term is one term: after it ended (Resign,
// loss) Guard still names its node, whose check fails once it is gone.
func (t *Term) Guard() *zk.CheckOp {
	if t == nil || t.done == nil {
		return nil // a zero or nil Term's: nothing held, and Multi refuses nil
	}
	return checkOp(&hold.Guard{Path: t.node, Version: -1})
}

// context returns a copy of parent that is cancelled, with Err as its
// cause, when the term ends; Run's fn gets it. Campaign's callers write the
// same in four lines (see Term).
func (t *Term) context(parent context.Context) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancelCause(parent)
	go func() {
		select {
		case <-t.done:
			cancel(t.Err())
		case <-ctx.Done():
		}
	}()
	return ctx, func() { cancel(context.Canceled) }
}
