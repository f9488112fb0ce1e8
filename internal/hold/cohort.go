package hold

import (
	"bytes"
	"context"
	"errors"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
)

// Cohorting: the handles of one session on one path share one place in
// the queue. While the process holds it, a releasing holder hands the lock
// to the next local waiter in memory, with no request to the server, until
// the cohort's bound is reached; then the place is given back so that
// other processes get their turn, and the local waiters left enqueue
// again, behind them. (Dice, Marathe and Shavit, "Lock Cohorting", PPoPP
// 2012, for NUMA nodes.) It is a Line whose place is kept across local
// grants: each local grant is a Hold of its own, with its own token (the
// place's czxid and the grant's index, see TokenShift).

// Bound is how far a cohort keeps its place: at most Handoffs local grants
// and Hold of time per place.
type Bound struct {
	Handoffs int
	Hold     time.Duration
}

// Cohort is a Line whose place is kept across local grants. Its Acquire
// and Release have a Line's contract. It is safe for concurrent use.
type Cohort struct {
	line  *Line
	q     *queue.Queue
	data  []byte
	bound Bound

	mu        sync.Mutex
	held      *queue.Place       // the shared place while the cohort holds it
	acquiring context.CancelFunc // set while the place is being taken for the waiters
	acqEnded  chan struct{}      // closed when that take has ended (acquired has run)
	trying    bool               // a TryLock is taking the place
	releasing bool               // the place is being given back
	holder    *Hold              // the local hold
	waiters   []*waiter          // local waiters, in Acquire order
	grants    int                // local grants on held so far
	since     time.Time          // when held was granted
	version   int32              // held's data version as the cohort wrote it
	guarded   bool               // the holder took a Guard
	newPlace  chan struct{}      // closed and replaced when a place is granted
	watch     context.CancelFunc // stops the watch on held (cohort_watch.go), nil while none runs
	armed     bool               // that watch is set: held's deletion would be seen
	proven    bool               // a write to held (the guard bump) just succeeded
	users     int                // acquisitions between a registry's join and leave
}

type waiter struct {
	ch chan grant // buffered: the grant never waits for the waiter
}

type grant struct {
	h   *Hold
	err error
}

// NewCohort returns a cohort over q's exclusive queue; l gives its kind,
// path and Events. Data is every place's node data.
func NewCohort(l *Line, q *queue.Queue, data []byte, b Bound) *Cohort {
	return &Cohort{line: l, q: q, data: data, bound: b, newPlace: make(chan struct{})}
}

// lostLocked returns the loss signal of the place the cohort holds, or nil.
func (c *Cohort) lostLocked() <-chan struct{} {
	if c.held == nil {
		return nil
	}
	return c.held.Epoch().Done
}

// dropLostLocked forgets the place if its ownership ended, and moves on:
// its holder's Release will return errs.ErrLockLost; the session deletes the
// node if it survived.
func (c *Cohort) dropLostLocked() {
	if c.held != nil && isClosed(c.held.Epoch().Done) {
		c.forgetLocked()
		c.holder = nil
		c.dispatchLocked()
	}
}

func (c *Cohort) idleLocked() bool {
	return c.held == nil && c.acquiring == nil && !c.trying && !c.releasing && c.holder == nil && len(c.waiters) == 0
}

// Acquire grants a local hold: at once when the cohort holds its place and
// nobody holds or waits locally, else in the local queue, taking the place
// if need be. With r.Try it never waits.
func (c *Cohort) Acquire(ctx context.Context, r queue.Request) (*Hold, error) {
	return c.line.acquire(ctx, c.Release, true, func() (*Hold, error) { return c.acquire(ctx, r.Try) })
}

func (c *Cohort) acquire(ctx context.Context, try bool) (*Hold, error) {
	c.mu.Lock()
	if try {
		return c.tryLocked(ctx)
	}
	w := &waiter{ch: make(chan grant, 1)}
	c.waiters = append(c.waiters, w)
	c.dispatchLocked()
	for {
		lost, newPlace := c.lostLocked(), c.newPlace
		c.mu.Unlock()
		select {
		case g := <-w.ch:
			return g.h, g.err
		case <-newPlace: // watch the new place's loss instead
			c.mu.Lock()
			continue
		case <-lost:
			// The place was lost under its holder: enqueue again at once,
			// as a waiter of another process would hold at once, rather
			// than wait for the old holder's Release.
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
			<-ended // the place taken for w alone is gone
		}
		return nil, ctx.Err()
	}
	c.mu.Unlock()
	// Granted as ctx ended: pass the hold on rather than keep it.
	if g := <-w.ch; g.err == nil {
		_ = c.Release(context.Background(), g.h)
	}
	return nil, ctx.Err()
}

// withdrawLocked takes w out of the local queue; false if it was granted
// already. A place that nobody holds or waits for any more goes: its take
// is cancelled, and the caller waits on ended until the queue has removed
// the node; a place held for w, waiting to be handed on (see
// grantableLocked), is given back.
func (c *Cohort) withdrawLocked(w *waiter) (ok bool, ended <-chan struct{}) {
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
		p := c.held
		c.forgetLocked()
		_ = c.giveLocked(context.Background(), p)
		c.dispatchLocked() // Acquire calls that queued meanwhile take the place now
	}
	return true, nil
}

// tryLocked is a try acquisition: granted only if the cohort holds its
// place with nobody local ahead, or if a try take of a place of its own
// gets it at once. c.mu is held on entry and released on return.
func (c *Cohort) tryLocked(ctx context.Context) (*Hold, error) {
	if c.held != nil && c.holder == nil && len(c.waiters) == 0 && c.withinBoundLocked() && c.grantableLocked() {
		h := c.grantLocked()
		c.mu.Unlock()
		return h, nil
	}
	if !c.idleLocked() {
		err := &errs.LockedError{Data: bytes.Clone(c.data)} // this process takes the place
		if c.held != nil {
			err = &errs.LockedError{Holder: c.held.Last().Node().Name, Session: c.held.Epoch().SessionID, Data: bytes.Clone(c.data)}
		}
		c.mu.Unlock()
		return nil, err
	}
	c.trying = true
	c.mu.Unlock()
	p, err := c.q.Take(ctx, queue.Request{Data: c.data, Try: true})
	c.mu.Lock()
	defer c.mu.Unlock()
	c.trying = false
	if err != nil {
		c.dispatchLocked() // Acquire calls that queued meanwhile take the place now
		return nil, err
	}
	c.setHeldLocked(p)
	return c.grantLocked(), nil
}

// dispatchLocked moves the cohort on: it grants the first local waiter if
// the cohort holds its place, nobody holds locally, and the place may be
// handed on (grantableLocked); or it starts taking the place if waiters
// are left and nothing is under way. While a handoff may come, the node is
// watched (watchLocked), which dispatches again once the watch is set.
func (c *Cohort) dispatchLocked() {
	switch {
	case len(c.waiters) == 0 || c.acquiring != nil || c.trying || c.releasing:
	case c.held != nil && (c.holder != nil || !c.grantableLocked()):
		c.watchLocked()
	case c.held != nil:
		w := c.waiters[0]
		c.waiters = c.waiters[1:]
		w.ch <- grant{h: c.grantLocked()}
		if len(c.waiters) > 0 {
			c.watchLocked()
		}
	default:
		c.takeLocked()
	}
}

// takeLocked enqueues the cohort's place, on a goroutine of the session,
// for as long as local waiters remain.
func (c *Cohort) takeLocked() {
	ctx, cancel := context.WithCancel(context.Background())
	ended := make(chan struct{})
	c.acquiring, c.acqEnded = cancel, ended
	if !c.q.Conn.Go(func(bg context.Context) {
		defer close(ended)
		defer context.AfterFunc(bg, cancel)()
		defer cancel()
		c.taken(c.q.Take(ctx, queue.Request{Data: c.data}))
	}) {
		c.acquiring = nil
		close(ended)
		c.failLocked(errs.ErrSessionClosed)
	}
}

// taken takes the outcome of the place's take.
func (c *Cohort) taken(p *queue.Place, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acquiring = nil
	switch {
	case err == nil && len(c.waiters) == 0:
		// Everybody left while it was granted: give it back; whoever came
		// meanwhile enqueues again.
		_ = c.giveLocked(context.Background(), p)
		c.dispatchLocked()
	case err == nil:
		c.setHeldLocked(p)
		c.dispatchLocked()
	case errors.Is(err, context.Canceled) && len(c.waiters) > 0:
		// Cancelled for want of waiters just before one came.
		c.takeLocked()
	case errors.Is(err, context.Canceled):
	default:
		c.failLocked(err)
	}
}

// failLocked fails every local waiter with err.
func (c *Cohort) failLocked(err error) {
	for _, w := range c.waiters {
		w.ch <- grant{err: err}
	}
	c.waiters = nil
}

func (c *Cohort) setHeldLocked(p *queue.Place) {
	c.stopWatchLocked()
	c.held, c.grants, c.since, c.version, c.guarded = p, 0, time.Now(), 0, false
	close(c.newPlace)
	c.newPlace = make(chan struct{})
}

// grantLocked makes a local hold of the cohort's place.
func (c *Cohort) grantLocked() *Hold {
	h := &Hold{place: c.held, local: int32(c.grants), co: c}
	c.holder, c.guarded, c.proven = h, false, false
	c.grants++
	return h
}

func (c *Cohort) withinBoundLocked() bool {
	return c.grants < c.bound.Handoffs && time.Since(c.since) < c.bound.Hold
}

func indexOf(ws []*waiter, w *waiter) int {
	for i, x := range ws {
		if x == w {
			return i
		}
	}
	return -1
}

func isClosed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// Cohorts is a session's cohorts by path: the handles of one session on
// one path made with a cohort bound share one Cohort, formed by the first
// acquisition and forgotten once nobody uses it. The zero value is ready.
type Cohorts struct {
	mu sync.Mutex
	m  map[string]*Cohort
}

// Acquire acquires through the cohort of path, forming it with form if
// there is none.
func (r *Cohorts) Acquire(ctx context.Context, path string, form func() *Cohort, req queue.Request) (*Hold, error) {
	c := r.join(path, form)
	h, err := c.Acquire(ctx, req)
	if err != nil {
		r.leave(path, c)
	}
	return h, err
}

// Release releases a local hold of one of r's cohorts (Cohort.Release).
func (r *Cohorts) Release(ctx context.Context, path string, h *Hold) error {
	err := h.co.Release(ctx, h)
	if h.Released() {
		r.leave(path, h.co)
	}
	return err
}

func (r *Cohorts) join(path string, form func() *Cohort) *Cohort {
	r.mu.Lock()
	defer r.mu.Unlock()
	c := r.m[path]
	if c == nil {
		if r.m == nil {
			r.m = make(map[string]*Cohort)
		}
		c = form()
		r.m[path] = c
	}
	c.mu.Lock()
	c.users++
	c.mu.Unlock()
	return c
}

// leave undoes one join; the registry forgets a cohort nobody uses.
func (r *Cohorts) leave(path string, c *Cohort) {
	r.mu.Lock()
	defer r.mu.Unlock()
	c.mu.Lock()
	defer c.mu.Unlock()
	c.users--
	if c.users == 0 && c.idleLocked() && r.m[path] == c {
		delete(r.m, path)
	}
}

// Waiters reports how many acquisitions wait in the cohort of path.
func (r *Cohorts) Waiters(path string) int {
	r.mu.Lock()
	c := r.m[path]
	r.mu.Unlock()
	if c == nil {
		return 0
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.waiters)
}
