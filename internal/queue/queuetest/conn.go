package queuetest

import (
	"context"
	"errors"
	"fmt"
	"path"
	"slices"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/queue"
)

// wrap reports a tree error the way the real Conn does: wrapped, so that
// callers must use errors.Is.
func wrap(op Op, p string, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("queuetest: %s %s: %w", op, p, err)
}

// CreateSeq creates an EPHEMERAL_SEQUENTIAL node of c's session.
func (c *Conn) CreateSeq(ctx context.Context, p string, data []byte) (string, int64, int64, error) {
	name, czxid, owner, _, err := c.create(ctx, p, data, true, false)
	return name, czxid, owner, err
}

// CreateAndList is CreateSeq with the parent's children as of just after
// the create, after creating those of the CONTAINER nodes parents that do
// not exist (as the real Conn does those it does not know to exist;
// OpContainer faults apply to each).
func (c *Conn) CreateAndList(ctx context.Context, parents []string, p string, data []byte) (string, int64, int64, []string, int64, error) {
	var perr error
	for _, d := range parents {
		if c.s.Exists(d) {
			continue
		}
		if err := c.CreateContainer(ctx, d); err != nil && perr == nil {
			perr = err
		}
	}
	name, czxid, owner, names, err := c.create(ctx, p, data, true, true)
	if perr != nil && errors.Is(err, client.ErrNoNode) {
		err = perr
	}
	var parent int64
	if names != nil {
		parent = c.s.czxid(path.Dir(p))
		c.czxids.Store(path.Dir(p), parent)
	}
	return name, czxid, owner, names, parent, err
}

// KnownCzxid returns the czxid of dir, the last of dirs, as c's replies
// last told it, or reads it (ReadCzxid) if none did, after creating dirs
// if it is missing.
func (c *Conn) KnownCzxid(ctx context.Context, dirs []string) (int64, error) {
	dir := dirs[len(dirs)-1]
	if v, ok := c.czxids.Load(dir); ok && v.(int64) != 0 {
		return v.(int64), nil
	}
	z, err := c.ReadCzxid(ctx, dir)
	if err != nil || z != 0 {
		return z, err
	}
	for _, d := range dirs {
		if err := c.CreateContainer(ctx, d); err != nil {
			return 0, err
		}
	}
	return c.ReadCzxid(ctx, dir)
}

// ReadCzxid is a Stat of dir that c remembers for KnownCzxid.
func (c *Conn) ReadCzxid(ctx context.Context, dir string) (int64, error) {
	st, err := c.Stat(ctx, dir)
	switch {
	case err != nil:
		return 0, err
	case st == nil:
		c.czxids.Delete(dir)
		return 0, nil
	}
	c.czxids.Store(dir, st.Czxid)
	return st.Czxid, nil
}

// CreateAndStat is CreateAndList with the parent's child count in place
// of its listing (-1 when the listing fault applies).
func (c *Conn) CreateAndStat(ctx context.Context, parents []string, p string, data []byte) (string, int64, int64, int32, int64, error) {
	name, czxid, owner, names, parent, err := c.CreateAndList(ctx, parents, p, data)
	if err != nil || names == nil {
		return name, czxid, owner, -1, 0, err
	}
	return name, czxid, owner, int32(len(names)), parent, nil
}

// Exist reports whether each of paths exists, one Stat each.
func (c *Conn) Exist(ctx context.Context, paths []string) ([]bool, error) {
	out := make([]bool, len(paths))
	for i, p := range paths {
		st, err := c.Stat(ctx, p)
		if err != nil {
			return nil, err
		}
		out[i] = st != nil
	}
	return out, nil
}

// CreateEphemeral creates a non-sequential EPHEMERAL node of c's session.
func (c *Conn) CreateEphemeral(ctx context.Context, p string, data []byte) (int64, int64, error) {
	_, czxid, owner, _, err := c.create(ctx, p, data, false, false)
	return czxid, owner, err
}

func (c *Conn) create(ctx context.Context, p string, data []byte, seq, list bool) (string, int64, int64, []string, error) {
	f, err := c.begin(ctx, OpCreate, p)
	if err != nil {
		return "", 0, 0, nil, err
	}
	var made string
	var czxid, owner int64
	var names []string
	if !f.Lost {
		s := c.s
		s.mu.Lock()
		var n *znode
		made, n, err = s.createLocked(p, data, c.sid, seq, false)
		if err == nil {
			czxid, owner = n.stat.Czxid, c.sid
			if list && !f.Unlisted {
				names = s.listLocked(path.Dir(p))
			}
		}
		s.mu.Unlock()
	}
	var undo func()
	if seq && made != "" { // the CreateSeq contract: no node outlives a cancelled create
		undo = func() {
			c.s.mu.Lock()
			defer c.s.mu.Unlock()
			c.s.deleteOwnedLocked(made, owner)
		}
	}
	if err := c.end(ctx, OpCreate, f, undo, wrap(OpCreate, p, err)); err != nil {
		return "", 0, 0, nil, err
	}
	return made, czxid, owner, names, nil
}

// CreateContainer creates a CONTAINER node; an existing node is fine.
func (c *Conn) CreateContainer(ctx context.Context, p string) error {
	f, err := c.begin(ctx, OpContainer, p)
	if err != nil {
		return err
	}
	if !f.Lost {
		c.s.mu.Lock()
		_, _, err = c.s.createLocked(p, nil, 0, false, true)
		c.s.mu.Unlock()
		if errors.Is(err, client.ErrNodeExists) {
			err = nil
		}
	}
	return c.end(ctx, OpContainer, f, nil, wrap(OpContainer, p, err))
}

// Children lists p's children (sorted by name).
func (c *Conn) Children(ctx context.Context, p string) ([]string, error) {
	names, _, err := c.ChildrenStat(ctx, p)
	return names, err
}

// ChildrenStat lists p's children with p's stat.
func (c *Conn) ChildrenStat(ctx context.Context, p string) ([]string, *client.Stat, error) {
	names, st, _, err := c.children(ctx, p, false)
	return names, st, err
}

// ChildrenW is ChildrenStat that also sets a one-shot child watch. The
// channel receives one event when p's children change, when p is deleted,
// or when the session expires.
func (c *Conn) ChildrenW(ctx context.Context, p string) ([]string, *client.Stat, <-chan client.Event, error) {
	return c.children(ctx, p, true)
}

func (c *Conn) children(ctx context.Context, p string, watch bool) ([]string, *client.Stat, <-chan client.Event, error) {
	f, err := c.begin(ctx, OpChildren, p)
	if err != nil {
		return nil, nil, nil, err
	}
	var names []string
	var st client.Stat
	var ch chan client.Event
	if !f.Lost {
		s := c.s
		s.mu.Lock()
		if n := s.nodes[p]; n == nil {
			err = client.ErrNoNode
		} else {
			names, st = s.listLocked(p), n.stat
			if watch {
				ch = make(chan client.Event, 1)
				s.childW[p] = append(s.childW[p], childWatch{c.sid, ch})
				s.childWs = append(s.childWs, Watch{c.sid, p})
				s.changedLocked()
			}
		}
		s.mu.Unlock()
	}
	if err := c.end(ctx, OpChildren, f, nil, wrap(OpChildren, p, err)); err != nil {
		return nil, nil, nil, err
	}
	return names, &st, ch, nil
}

// StopChildren removes the child watch of p that ChildrenW returned as ch,
// unless it fired.
func (c *Conn) StopChildren(p string, ch <-chan client.Event) {
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	s.childW[p] = slices.DeleteFunc(s.childW[p], func(w childWatch) bool { return w.ch == ch })
	if len(s.childW[p]) == 0 {
		delete(s.childW, p)
	}
	s.changedLocked()
}

// Stat returns p's stat, or nil if p does not exist.
func (c *Conn) Stat(ctx context.Context, p string) (*client.Stat, error) {
	_, st, err := c.get(ctx, OpStat, p)
	if errors.Is(err, client.ErrNoNode) {
		return nil, nil
	}
	return st, err
}

// Get returns p's data and stat.
func (c *Conn) Get(ctx context.Context, p string) ([]byte, *client.Stat, error) {
	return c.get(ctx, OpGet, p)
}

func (c *Conn) get(ctx context.Context, op Op, p string) ([]byte, *client.Stat, error) {
	f, err := c.begin(ctx, op, p)
	if err != nil {
		return nil, nil, err
	}
	var data []byte
	var st client.Stat
	if !f.Lost {
		c.s.mu.Lock()
		if n := c.s.nodes[p]; n == nil {
			err = client.ErrNoNode
		} else {
			data, st = slices.Clone(n.data), n.stat
		}
		c.s.mu.Unlock()
	}
	if err := c.end(ctx, op, f, nil, wrap(op, p, err)); err != nil {
		return nil, nil, err
	}
	return data, &st, nil
}

// Delete deletes p; a missing node counts as deleted.
func (c *Conn) Delete(ctx context.Context, p string) error {
	f, err := c.begin(ctx, OpDelete, p)
	if err != nil {
		return err
	}
	if !f.Lost {
		c.s.mu.Lock()
		err = c.s.deleteLocked(p)
		c.s.mu.Unlock()
		if errors.Is(err, client.ErrNoNode) {
			err = nil
		}
	}
	return c.end(ctx, OpDelete, f, nil, wrap(OpDelete, p, err))
}

// Discard deletes p, at once, if session sid owns it. The real Conn
// retries in the background until the node or the session is gone; the
// end state is the same. Of a fault it honours Before only.
func (c *Conn) Discard(p string, sid int64) {
	_, _ = c.begin(context.Background(), OpDiscard, p) // counts it; runs a fault's Before
	c.s.mu.Lock()
	defer c.s.mu.Unlock()
	c.discards = append(c.discards, Watch{sid, p})
	c.s.deleteOwnedLocked(p, sid)
	c.s.changedLocked()
}

// WaitChange blocks until p changes (Released if its data announced
// releases when the watch was set, else LookAgain) or is deleted (Deleted;
// at once if it does not exist), the live epoch ends (LookAgain), or ctx
// ends. Like the real one, it first waits for a live epoch.
func (c *Conn) WaitChange(ctx context.Context, p string) (queue.Change, error) {
	return c.waitChange(ctx, p, nil)
}

// WaitData is WaitChange that returns LookAgain at once if p's data
// version is no longer version. It takes the faults of OpWatch.
func (c *Conn) WaitData(ctx context.Context, p string, version int32) (queue.Change, error) {
	return c.waitChange(ctx, p, &version)
}

func (c *Conn) waitChange(ctx context.Context, p string, version *int32) (queue.Change, error) {
	f, err := c.begin(ctx, OpWatch, p)
	if err != nil {
		return queue.LookAgain, err
	}
	if f.Err != nil {
		return queue.LookAgain, f.Err
	}
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return queue.LookAgain, err
	}
	s := c.s
	s.mu.Lock()
	if s.nodes[p] == nil {
		s.mu.Unlock()
		return queue.Deleted, nil
	}
	if version != nil && s.nodes[p].stat.Version != *version {
		s.mu.Unlock()
		return queue.LookAgain, nil
	}
	wait := c.watchLocked(p, f, ep)
	s.mu.Unlock()
	return wait(ctx)
}

// ReadWatch reads p's data and sets a data watch on it in one step (ok is
// false, with no watch, if p does not exist); wait is WaitChange's wait on
// that watch. It takes the faults of OpWatch.
func (c *Conn) ReadWatch(ctx context.Context, p string) ([]byte, bool, func(context.Context) (queue.Change, error), error) {
	f, err := c.begin(ctx, OpWatch, p)
	if err != nil {
		return nil, false, nil, err
	}
	if f.Err != nil {
		return nil, false, nil, f.Err
	}
	ep, err := c.awaitEpoch(ctx)
	if err != nil {
		return nil, false, nil, err
	}
	s := c.s
	s.mu.Lock()
	defer s.mu.Unlock()
	n := s.nodes[p]
	if n == nil {
		return nil, false, nil, nil
	}
	return slices.Clone(n.data), true, c.watchLocked(p, f, ep), nil
}

// watchLocked sets a data watch on p (none if f loses the request) and
// returns the wait on it; s.mu must be held. The wait counts as blocked
// on OpWatch from now until it returns.
func (c *Conn) watchLocked(p string, f Fault, ep *epoch) func(context.Context) (queue.Change, error) {
	s := c.s
	ch := make(chan queue.Change, 1)
	if !f.Lost {
		s.dataW[p] = append(s.dataW[p], dataWatch{ch, queue.Announces(s.nodes[p].data)})
		s.watches = append(s.watches, Watch{c.sid, p})
	}
	s.blocked[blocker{c, OpWatch}]++
	s.changedLocked()
	return func(ctx context.Context) (queue.Change, error) {
		if f.After != nil {
			f.After()
		}
		defer func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.dataW[p] = slices.DeleteFunc(s.dataW[p], func(x dataWatch) bool { return x.ch == ch })
			if len(s.dataW[p]) == 0 {
				delete(s.dataW, p)
			}
			s.blocked[blocker{c, OpWatch}]--
			s.changedLocked()
		}()
		select {
		case what := <-ch:
			return what, nil
		case <-ep.done:
			return queue.LookAgain, nil
		case <-ctx.Done():
			return queue.LookAgain, ctx.Err()
		}
	}
}

// DeleteUntil is Delete that gives up, with ctx's error, once ep ends.
func (c *Conn) DeleteUntil(ctx context.Context, p string, ep queue.Epoch) error {
	ctx, cancel := untilStop(ctx, done(ep))
	defer cancel()
	return c.Delete(ctx, p)
}

// ReleaseUntil is DeleteUntil with the release announced: p's data is set
// and p deleted in one step, which fires p's data watches with Released.
// It takes the faults of OpDelete.
func (c *Conn) ReleaseUntil(ctx context.Context, p string, ep queue.Epoch) error {
	return c.release(ctx, p, ep, false)
}

// ReleaseOwnUntil is ReleaseUntil with a missing node an error wrapping
// client.ErrNoNode (the fake applies a release once or not at all).
func (c *Conn) ReleaseOwnUntil(ctx context.Context, p string, ep queue.Epoch) error {
	return c.release(ctx, p, ep, true)
}

// release is ReleaseUntil, or with own ReleaseOwnUntil.
func (c *Conn) release(ctx context.Context, p string, ep queue.Epoch, own bool) error {
	ctx, cancel := untilStop(ctx, done(ep))
	defer cancel()
	f, err := c.begin(ctx, OpDelete, p)
	if err != nil {
		return err
	}
	if !f.Lost {
		c.s.mu.Lock()
		c.s.calls[OpRelease]++
		err = c.s.releaseLocked(p)
		c.s.mu.Unlock()
		if !own && errors.Is(err, client.ErrNoNode) {
			err = nil
		}
	}
	return c.end(ctx, OpDelete, f, nil, wrap(OpDelete, p, err))
}

// untilStop returns ctx, cancelled also when stop closes.
// done is ep's Done; nil, never closed, for the zero Epoch.
func done(ep queue.Epoch) <-chan struct{} {
	if ep.EpochInfo == nil {
		return nil
	}
	return ep.Done
}

func untilStop(ctx context.Context, stop <-chan struct{}) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(ctx)
	go func() {
		select {
		case <-stop:
			cancel()
		case <-ctx.Done():
		}
	}()
	return ctx, cancel
}

// WaitExists blocks until p exists or ctx ends.
func (c *Conn) WaitExists(ctx context.Context, p string) error {
	return c.s.Await(ctx, func() bool {
		c.s.mu.Lock()
		defer c.s.mu.Unlock()
		return c.s.nodes[p] != nil
	})
}

// SetData sets p's data if its version is version (-1: any).
func (c *Conn) SetData(ctx context.Context, p string, data []byte, version int32) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	c.s.mu.Lock()
	c.s.calls[OpSet]++
	n := c.s.nodes[p]
	bad := n != nil && version != -1 && n.stat.Version != version
	c.s.mu.Unlock()
	if bad {
		return client.ErrBadVersion
	}
	return c.s.SetData(p, data)
}

// Go runs f on a goroutine; ctx never ends.
func (c *Conn) Go(f func(ctx context.Context)) bool {
	go f(context.Background())
	return true
}
