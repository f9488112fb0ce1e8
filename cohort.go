package zklock

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/queue"
)

// Cohorting (WithCohort): the Mutex handles of one Session on one path
// share one node in the queue. While the process holds that node, a
// releasing holder hands the lock to the next local waiter in memory, with
// no request to the server, until the cohort's bound is reached; then the
// node is released so that other processes get their turn, and the local
// waiters left enqueue again, behind them. (Dice, Marathe and Shavit, "Lock
// Cohorting", PPoPP 2012, for NUMA nodes.)

// Default cohort bounds (see WithCohort).
const (
	DefaultCohortHandoffs = 32
	DefaultCohortHold     = 100 * time.Millisecond
)

// tokenShift makes room in a fencing token for the local grant's index:
// Token is the node's czxid << tokenShift | index, so tokens increase over
// local handoffs and stay below the next node's tokens. A cohort grants at
// most 1<<tokenShift times per node.
const tokenShift = 12

const maxCohortHandoffs = 1<<tokenShift - 1

// WithCohort makes a Mutex (or ReentrantMutex) one of a cohort: every
// handle of one Session on one path created with WithCohort shares one
// node in the queue. A release hands the lock to the next waiting handle of
// the cohort in memory, in FIFO order, without a server round trip, as long
// as the cohort has held its node for fewer than maxHandoffs local grants
// and for less than maxHold; past either bound the node is released, the
// next process in the queue holds, and the cohort's remaining waiters
// enqueue again behind it.
//
// Fairness: a contender of another process (or another Session) queued
// behind the cohort's node holds after at most maxHandoffs local holds, or
// after maxHold plus the one local hold in progress when maxHold passed,
// whichever comes first. Within the cohort, handles are granted in the
// order they called Lock.
//
// Every guarantee holds per local holder: Lost fires for each when the
// shared node's ownership ends; Token strictly increases over local
// handoffs (see Mutex.Token), so a resource that accepts only increasing
// tokens rejects a stale local holder; and Guard, once a holder took it,
// is invalidated before the next local holder is granted (the cohort bumps
// the node's data version, one write, only when the previous holder took a
// Guard).
//
// A local handoff relies on the shared node, so the cohort hands it on
// only while it knows the node stands: its session's ownership has not
// ended, and, while a local waiter queues behind a local holder, a watch
// on the node (one read per node, plus one after each guard bump; none on
// the uncontended path) has not seen it deleted. A node deleted by another
// client (Break) is dropped: its holder's Unlock returns ErrLockLost, and
// the local waiters enqueue again behind whoever holds now. The holder's
// own Lost does not fire for that deletion (as for any broken holder).
//
// WithCohort applies to Mutex and ReentrantMutex; NewRWMutex, NewSemaphore
// and NewElection refuse it, and so does combining it with WithRevocable
// or WithMaxHold, with ErrInvalidOption: one request or one bound could
// not address the several holders a node is shared by.
//
// maxHandoffs must be from 1 to 4095; 0 means DefaultCohortHandoffs.
// maxHold must not be negative; 0 means DefaultCohortHold. Handles of one
// cohort share the bounds and node data of the handle whose Lock formed it.
// Without WithCohort (the default) every handle has its own node.
func WithCohort(maxHandoffs int, maxHold time.Duration) Option {
	return func(o *primitiveOptions) error {
		if maxHandoffs < 0 || maxHandoffs > maxCohortHandoffs || maxHold < 0 {
			return invalid("cohort bound (%d handoffs, %v) out of range", maxHandoffs, maxHold)
		}
		if maxHandoffs == 0 {
			maxHandoffs = DefaultCohortHandoffs
		}
		if maxHold == 0 {
			maxHold = DefaultCohortHold
		}
		o.cohort = &cohortBound{handoffs: maxHandoffs, hold: maxHold}
		return nil
	}
}

type cohortBound struct {
	handoffs int
	hold     time.Duration
}

// cohorts is a Session's registry of cohorts by path.
type cohorts struct {
	mu sync.Mutex
	m  map[string]*cohort
}

// join returns the cohort of m's path, forming it if need be, counted as
// used by one more acquisition until leave.
func (r *cohorts) join(m *Mutex) *cohort {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.m[m.q.Dir]
	if c == nil {
		if r.m == nil {
			r.m = make(map[string]*cohort)
		}
		c = &cohort{s: m.s, q: m.q, data: m.data, bound: *m.co, newNode: make(chan struct{})}
		r.m[m.q.Dir] = c
	}
	c.users++
	return c
}

// leave undoes one join; the registry forgets a cohort nobody uses.
func (r *cohorts) leave(c *cohort) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users--
	if c.users == 0 && c.idleLocked() && r.m[c.q.Dir] == c {
		delete(r.m, c.q.Dir)
	}
}

// cohort is the handles of one Session on one path that share one node.
type cohort struct {
	s     *Session
	q     queue.Queue
	data  []byte
	bound cohortBound

	mu        sync.Mutex
	users     int                // acquisitions between join and leave
	held      *queue.Held        // the shared node while the cohort holds it
	acquiring context.CancelFunc // set while the node is being acquired for the waiters
	acqEnded  chan struct{}      // closed when that acquisition has ended (acquired has run)
	trying    bool               // a TryLock is acquiring the node
	releasing bool               // the node is being released
	holder    *Mutex             // the local holder
	waiters   []*cohortWaiter    // local waiters, in Lock order
	grants    int                // local grants on held so far
	since     time.Time          // when held was granted
	version   int32              // held's data version as the cohort wrote it
	guarded   bool               // the holder took a Guard
	newNode   chan struct{}      // closed and replaced when a node is granted
	watch     context.CancelFunc // stops the watch on held (cohort_watch.go), nil while none runs
	armed     bool               // that watch is set: held's deletion would be seen
	proven    bool               // a write to held (the guard bump) just succeeded
}

type cohortWaiter struct {
	m  *Mutex
	ch chan cohortGrant // buffered: the grant never waits for the waiter
}

// cohortGrant is a local hold: its own copy of the shared Held (so
// Metrics tells local holds apart) and its index among the node's grants.
type cohortGrant struct {
	h     *queue.Held
	local int
	err   error
}

// lostLocked returns the loss signal of the node the cohort holds, or nil.
func (c *cohort) lostLocked() <-chan struct{} {
	if c.held == nil {
		return nil
	}
	return c.held.Epoch.Done
}

// dropLostLocked forgets the node if its ownership ended, and moves on:
// its holder's Unlock will return ErrLockLost (see unlock); the session
// deletes the node if it survived.
func (c *cohort) dropLostLocked() {
	if c.held == nil {
		return
	}
	select {
	case <-c.held.Epoch.Done:
		c.forgetLocked()
		c.holder = nil
		c.dispatchLocked()
	default:
	}
}

func (c *cohort) idleLocked() bool {
	return c.held == nil && c.acquiring == nil && !c.trying && !c.releasing && c.holder == nil && len(c.waiters) == 0
}

// lock acquires for m: at once when the cohort holds its node and nobody
// holds or waits locally, else in the local queue, forming the shared node
// if need be. With try it never waits.
func (c *cohort) lock(ctx context.Context, m *Mutex, try bool) (cohortGrant, error) {
	c.mu.Lock()
	if try {
		return c.tryLocked(ctx, m)
	}
	w := &cohortWaiter{m: m, ch: make(chan cohortGrant, 1)}
	c.waiters = append(c.waiters, w)
	c.dispatchLocked()
	for {
		lost, newNode := c.lostLocked(), c.newNode
		c.mu.Unlock()
		select {
		case g := <-w.ch:
			return g, g.err
		case <-newNode: // watch the new node's loss instead
			c.mu.Lock()
			continue
		case <-lost:
			// The cohort's node was lost under its holder: enqueue again
			// at once, as a waiter of another process would hold at once,
			// rather than wait for the old holder's Unlock.
			c.mu.Lock()
			c.dropLostLocked()
			continue
		case <-ctx.Done():
		}
		break
	}
	c.mu.Lock()
	if ok, ended := c.withdrawLocked(w); ok {
		c.mu.Unlock()
		if ended != nil {
			<-ended // the node made for w alone is gone (Cleanup in the package doc)
		}
		return cohortGrant{}, ctx.Err()
	}
	c.mu.Unlock()
	// Granted as ctx ended: pass the hold on rather than keep it.
	if g := <-w.ch; g.err == nil {
		_ = c.unlock(context.Background(), m, g.h.Epoch.Done)
	}
	return cohortGrant{}, ctx.Err()
}

// withdrawLocked takes w out of the local queue; false if it was granted
// already. A node that nobody holds or waits for any more goes: its
// acquisition is cancelled, and the caller waits on ended until the queue
// has removed the node; a node held for w, waiting to be handed on (see
// grantableLocked), is released.
func (c *cohort) withdrawLocked(w *cohortWaiter) (ok bool, ended <-chan struct{}) {
	i := indexOf(c.waiters, w)
	if i < 0 {
		return false, nil
	}
	c.waiters = append(c.waiters[:i], c.waiters[i+1:]...)
	switch {
	case len(c.waiters) > 0:
	case c.acquiring != nil:
		c.acquiring()
		return true, c.acqEnded
	case c.held != nil && c.holder == nil && !c.releasing:
		h := c.held
		c.forgetLocked()
		_ = c.releaseLocked(h, context.Background())
		c.dispatchLocked() // Lock calls that queued meanwhile acquire now
	}
	return true, nil
}

// tryLocked is TryLock: granted only if the cohort holds its node with
// nobody local ahead, or if a Try acquisition of a node of its own gets
// it at once. c.mu is held on entry and released on return.
func (c *cohort) tryLocked(ctx context.Context, m *Mutex) (cohortGrant, error) {
	if c.held != nil && c.holder == nil && len(c.waiters) == 0 && c.withinBoundLocked() && c.grantableLocked() {
		g := c.grantLocked(m)
		c.mu.Unlock()
		return g, nil
	}
	if !c.idleLocked() {
		var err error = &LockedError{Session: c.s.SessionID(), Data: c.data}
		if c.held != nil {
			err = &LockedError{Holder: c.held.Node.Name, Session: c.held.Epoch.SessionID, Data: c.data}
		}
		c.mu.Unlock()
		return cohortGrant{}, err
	}
	c.trying = true
	c.mu.Unlock()
	h, err := c.q.Acquire(ctx, queue.Request{Data: c.data, Try: true})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trying = false
	if err != nil {
		c.dispatchLocked() // Lock calls that queued meanwhile acquire now
		return cohortGrant{}, mapQueueErr(err)
	}
	c.setHeldLocked(h)
	return c.grantLocked(m), nil
}

// dispatchLocked moves the cohort on: it grants the first local waiter if
// the cohort holds its node, nobody holds locally, and the node may be
// handed on (grantableLocked); or it starts acquiring the node if waiters
// are left and nothing is under way. While a handoff may come, the node
// is watched (watchLocked), which dispatches again once the watch is set.
func (c *cohort) dispatchLocked() {
	switch {
	case len(c.waiters) == 0 || c.acquiring != nil || c.trying || c.releasing:
	case c.held != nil && (c.holder != nil || !c.grantableLocked()):
		c.watchLocked()
	case c.held != nil:
		w := c.waiters[0]
		c.waiters = c.waiters[1:]
		w.ch <- c.grantLocked(w.m)
		if len(c.waiters) > 0 {
			c.watchLocked()
		}
	default:
		c.acquireLocked()
	}
}

// acquireLocked enqueues the cohort's node, on a goroutine of the
// Session's, for as long as local waiters remain.
func (c *cohort) acquireLocked() {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	c.acquiring, c.acqEnded = cancel, ended
	if !c.q.Conn.Go(func(bg context.Context) {
		defer close(ended)
		defer context.AfterFunc(bg, cancel)()
		defer cancel()
		c.acquired(c.q.Acquire(ctx, queue.Request{Data: c.data}))
	}) {
		c.acquiring = nil
		close(ended)
		c.failLocked(ErrSessionClosed)
	}
}

// acquired takes the outcome of the node's acquisition.
func (c *cohort) acquired(h *queue.Held, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acquiring = nil
	switch {
	case err == nil && len(c.waiters) == 0:
		// Everybody left while it was granted: give it back; whoever
		// came meanwhile enqueues again.
		_ = c.releaseLocked(h, context.Background())
		c.dispatchLocked()
	case err == nil:
		c.setHeldLocked(h)
		c.dispatchLocked()
	case errors.Is(err, context.Canceled) && len(c.waiters) > 0:
		// Cancelled for want of waiters just before one came.
		c.acquireLocked()
	case errors.Is(err, context.Canceled):
	default:
		c.failLocked(mapQueueErr(err))
	}
}

// failLocked fails every local waiter with err.
func (c *cohort) failLocked(err error) {
	for _, w := range c.waiters {
		w.ch <- cohortGrant{err: err}
	}
	c.waiters = nil
}

func (c *cohort) setHeldLocked(h *queue.Held) {
	c.stopWatchLocked()
	c.held, c.grants, c.since, c.version, c.guarded = h, 0, time.Now(), 0, false
	close(c.newNode)
	c.newNode = make(chan struct{})
}

// grantLocked makes m the local holder of the cohort's node.
func (c *cohort) grantLocked(m *Mutex) cohortGrant {
	h := *c.held
	h.Waited = c.grants > 0 || h.Waited
	g := cohortGrant{h: &h, local: c.grants}
	c.holder, c.guarded, c.proven = m, false, false
	c.grants++
	return g
}

func (c *cohort) withinBoundLocked() bool {
	return c.grants < c.bound.handoffs && time.Since(c.since) < c.bound.hold
}

func indexOf(ws []*cohortWaiter, w *cohortWaiter) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}
