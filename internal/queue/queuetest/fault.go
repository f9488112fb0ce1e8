package queuetest

import (
	"context"
	"slices"

	"github.com/zklock/zklock/internal/client"
)

// Op names a kind of request, for faults and counts.
type Op string

// The kinds of request.
const (
	OpEpoch     Op = "epoch"     // Epoch
	OpCreate    Op = "create"    // CreateSeq, CreateAndList, CreateEphemeral
	OpContainer Op = "container" // CreateContainer
	OpChildren  Op = "children"  // Children, ChildrenStat, ChildrenW
	OpStat      Op = "stat"      // Stat
	OpGet       Op = "get"       // Get
	OpDelete    Op = "delete"    // Delete, DeleteUntil, ReleaseUntil
	OpRelease   Op = "release"   // ReleaseUntil (counted only: it takes OpDelete's faults)
	OpWatch     Op = "watch"     // WaitChange, WaitData, ReadWatch
	OpDiscard   Op = "discard"   // Discard (it takes a fault's Before only)
	OpSet       Op = "set"       // SetData (counted only: it takes no fault)
)

// Fault changes what happens to one request. The zero Fault changes
// nothing. Epoch honours Before, Err and After; WaitChange also Lost;
// Discard Before only; the other requests every field.
type Fault struct {
	// Path, if set, limits the fault to the next request on Path (for a
	// sequential create: the request path, without the sequence number).
	Path string
	// Before runs before the request reaches the tree, with no lock held:
	// reap a parent, end the epoch, start a new session, cancel the ctx.
	Before func()
	// Lost: the request never reaches the tree. Unless Err or Hang says
	// otherwise, the caller gets client.ErrConnectionLoss. For WaitChange,
	// the watch is never set (the server did not restore it after a
	// reconnect): only the epoch's end or ctx wakes the caller.
	Lost bool
	// After runs once the request was applied (or lost), before the reply.
	After func()
	// Err replaces the reply: the request was applied (unless Lost) and the
	// caller gets Err, say client.ErrConnectionLoss.
	Err error
	// Hang: no reply comes. The call blocks until its ctx ends and returns
	// ctx.Err(); a CreateSeq or CreateAndList then removes the node it made,
	// as its contract says (CreateEphemeral does not).
	Hang bool
	// Unlisted: CreateAndList returns no listing.
	Unlisted bool
}

// Inject queues f for the next request of kind op (and, if f.Path is set,
// on that path). Faults for one op are used in the order injected.
func (c *Conn) Inject(op Op, f Fault) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.faults = append(c.faults, pending{op, f})
}

// Observe makes f see each request of c as it begins (Discard's aside),
// with its ctx, kind and path, once its injected fault (if any) was
// taken: f may change that fault, say add an After that runs another
// caller's request inside this one's exchange, or make it Hang. It runs
// with no lock held. nil stops it.
func (c *Conn) Observe(f func(ctx context.Context, op Op, p string, fault *Fault)) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.observe = f
}

// Pending returns how many injected faults no request has used yet.
func (c *Conn) Pending() int {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return len(c.faults)
}

type pending struct {
	op Op
	f  Fault
}

// begin counts a request, takes its fault and runs the fault's Before. A
// request whose ctx has already ended is not sent; one whose ctx Before
// ends is (it was in flight).
func (c *Conn) begin(ctx context.Context, op Op, p string) (Fault, error) {
	if err := ctx.Err(); err != nil {
		return Fault{}, err
	}
	s := c.s
	s.mu.Lock()
	s.calls[op]++
	var f Fault
	if i := slices.IndexFunc(c.faults, func(x pending) bool {
		return x.op == op && (x.f.Path == "" || x.f.Path == p)
	}); i >= 0 {
		f = c.faults[i].f
		c.faults = slices.Delete(c.faults, i, i+1)
	}
	obs := c.observe
	s.changedLocked()
	s.mu.Unlock()
	if obs != nil && op != OpDiscard {
		obs(ctx, op, p, &f)
	}
	if f.Before != nil {
		f.Before()
	}
	return f, nil
}

// end finishes a request after it was applied (or lost): it runs After,
// then replies. undo, if not nil, runs when a hung request's ctx ends.
// applied is the tree's own answer, returned when the fault changes none.
func (c *Conn) end(ctx context.Context, op Op, f Fault, undo func(), applied error) error {
	if f.After != nil {
		f.After()
	}
	switch {
	case f.Hang:
		c.block(op, +1)
		defer c.block(op, -1)
		<-ctx.Done()
		if undo != nil {
			undo()
		}
		return ctx.Err()
	case f.Err != nil:
		return f.Err
	case f.Lost:
		return client.ErrConnectionLoss
	}
	return applied
}

// block counts callers of c blocked in op.
func (c *Conn) block(op Op, d int) {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.s.blocked[blocker{c, op}] += d
	c.s.changedLocked()
}

// Blocked returns how many of c's calls of kind op are blocked now: in a
// hung request, in Epoch waiting for a live epoch (OpEpoch), or in
// WaitChange (OpWatch).
func (c *Conn) Blocked(op Op) int {
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	return c.s.blocked[blocker{c, op}]
}
