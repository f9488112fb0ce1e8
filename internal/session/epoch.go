package session

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Epoch is a stretch of time during which the client may assume the server
// holds its session (see zklock.Session.OwnershipDeadline); the queue
// and the hold engine carry it with every node they hold. Done is closed
// when it ends; it never reopens. It is one pointer to what every Epoch of
// the same stretch shares: a held node keeps 8 bytes of it, not 40 (with
// 100,000 locks held, 2026-11-26). The zero Epoch is none: its fields
// must not be read.
type Epoch struct{ *EpochInfo }

// EpochInfo is what an Epoch says; the session makes one per epoch.
type EpochInfo struct {
	SessionID int64
	Done      <-chan struct{}
	Key       any // identifies the epoch to Conn.Track
	// Check, if set, ends the epoch at once should its deadline have
	// passed: called before Done is handed to a caller who will rely on it.
	Check func()
}

// Lost returns Done after Check: a process that was frozen past the
// epoch's deadline finds Done closed, not still open until a timer runs.
func (e Epoch) Lost() <-chan struct{} {
	if e.Check != nil {
		e.Check()
	}
	return e.Done
}

// epoch is a stretch of time during which the client may assume the server
// holds its session. It ends at the ownership deadline, at expiry or at
// Close, and never restarts: a later stretch is a new epoch.
type epoch struct {
	sid int64
	// ctx ends with the epoch (requests that stop with it take it); done
	// is its Done.
	ctx    context.Context
	cancel context.CancelFunc
	done   <-chan struct{}
	pub    EpochInfo // what Conn.Epoch hands out, shared by all

	// mu guards nodes, ended and the at of every Tracked listed, so that
	// Track and Untrack take the epoch's lock, not the Conn's: a node is
	// either tracked before the epoch ends, and deleted then, or refused.
	mu    sync.Mutex
	ended bool
	nodes []*Tracked // nodes to delete when the epoch ends

	// told is the latest deadline told to a caller while the epoch was
	// live (ns since base; Conn.ToldDeadline): its nodes are not deleted
	// before it, so that no rival is granted before a deadline a holder
	// was told, even when a rearm or a timing change ends the epoch
	// earlier.
	told atomic.Int64
}

// Tracked is a node the session deletes when the epoch it was tracked in
// ends (Conn.Track), should the session survive. The caller keeps it (a
// held node embeds one) and the epoch lists it: with 100,000 locks held a
// map of paths cost ~43 bytes a lock, the list ~10 (2026-11-26). A Tracked
// is tracked in its own node's epoch only.
type Tracked struct {
	Path string
	at   int32 // 1 + its index in its epoch's list, under the epoch's mu; 0: not listed
}

// OwnershipDeadline returns the instant after which the server may have
// expired the session: the anchor, plus the session timeout, minus the
// safety margin. The anchor is the latest time at which the leader, the
// only server that expires sessions, is proven to have restarted the
// session's clock (evidence.go): the send time of a request answered by
// a standalone server, or of a (re)connect; on an ensemble's connection,
// the send time of a request the server answered at least
// its lag (syncLimit*tickTime plus a tick) before it answered a later one.
// The timeout is the lowest any server granted, or a known server would
// grant, the session. The server's clock restarts when a request arrives,
// after it was sent, and it expires sessions only after the timeout (it
// rounds up to a tick), so the leader cannot expire the session before
// anchor+timeout. The margin (by default a fifth of the timeout; see
// WithSafetyMargin) leaves the holder time to stop work after the signal
// and absorbs timer lateness on a loaded machine.
func (c *Conn) OwnershipDeadline() time.Time {
	t := time.Duration(c.timeout.Load())
	end := min(c.anchor.Load()+int64(t), c.rearmEnd.Load())
	return c.base.Add(time.Duration(end) - c.margin(t))
}

// ToldDeadline is OwnershipDeadline for a caller who may rely on it: the
// live epoch's nodes are not deleted before it (see epoch.told).
func (c *Conn) ToldDeadline() time.Time {
	d := c.OwnershipDeadline()
	if ep := c.live.Load(); ep != nil {
		n := c.since(d)
		for {
			old := ep.told.Load()
			if n <= old || ep.told.CompareAndSwap(old, n) {
				break
			}
		}
	}
	return d
}

func (c *Conn) margin(timeout time.Duration) time.Duration {
	if c.cfg.Margin > 0 {
		return c.cfg.Margin
	}
	return timeout / 5
}

// Ownership returns a channel that is closed when the current ownership
// epoch ends: at the ownership deadline, when the session expires, or at
// Close. While no epoch is live (for example after the deadline passed and
// before the client reconnects) it returns a closed channel.
func (c *Conn) Ownership() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.ep == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return c.ep.done
}

// awaitEpoch waits until an epoch is live and returns it.
func (c *Conn) awaitEpoch(ctx context.Context) (*epoch, error) {
	if ep := c.liveEpoch(); ep != nil {
		return ep, nil
	}
	for {
		c.mu.Lock()
		c.loseIfDueLocked()
		ep, st, changed, broken := c.ep, c.state, c.changed, c.broken
		c.mu.Unlock()
		if st == StateClosed {
			return nil, ErrClosed
		}
		if broken != nil && ep == nil {
			return nil, broken
		}
		if ep != nil {
			return ep, nil
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

// liveEpoch returns the live epoch without taking mu when nothing is to be
// done about it: its deadline is ahead and the machine was not suspended
// since the last look, the conditions under which loseIfDueLocked leaves
// it be. Otherwise it returns nil, and the caller looks under mu. The
// epoch may end right after either look; its holders learn it from Done.
func (c *Conn) liveEpoch() *epoch {
	ep := c.live.Load()
	if ep == nil || suspendedClock()-c.suspended.Load() > resumeSlack || time.Until(c.OwnershipDeadline()) <= 0 {
		return nil
	}
	return ep
}

// loseIfDueLocked ends the live epoch if its deadline has passed, or if
// the machine was suspended since the last look (suspended time passes
// for the server but not on Go's monotonic clock). The watchdog does this
// on its timer; awaitEpoch and track do it too, because a process frozen
// (SIGSTOP, a long GC pause) past the deadline runs again before the
// watchdog's timer goroutine does, and must not be handed a grant on an
// epoch that is already over.
func (c *Conn) loseIfDueLocked() bool {
	resumed := c.resumedLocked()
	if c.ep == nil || (!resumed && time.Until(c.OwnershipDeadline()) > 0) {
		return false
	}
	sid := c.sid
	c.endEpochLocked(false)
	c.publishLocked(StateLost, sid)
	if resumed {
		c.logs.add(slog.LevelWarn, "zklock: the machine was suspended; locks held through the session are lost",
			"session", fmt.Sprintf("0x%x", sid))
	} else {
		c.logs.add(slog.LevelWarn, "zklock: ownership deadline passed; locks held through the session are lost",
			"session", fmt.Sprintf("0x%x", sid))
	}
	return true
}

// CheckDeadline ends the live epoch at once if its deadline has passed,
// rather than when the watchdog next looks: a caller about to rely on a
// hold (its loss signal read) after a freeze learns of the loss now.
func (c *Conn) CheckDeadline() {
	c.mu.Lock()
	c.loseIfDueLocked()
	c.mu.Unlock()
}

// resumedLocked reports whether the machine was suspended since it last
// looked. Every reply to a request sent before then stops counting as
// evidence, and the anchor is set back so that the deadline is past until
// a reply to a later request proves the session again.
func (c *Conn) resumedLocked() bool {
	total := suspendedClock()
	if total-c.suspended.Load() <= resumeSlack {
		return false
	}
	c.suspended.Store(total)
	c.voidEvidence()
	return true
}

// voidEvidence makes every reply to a request sent before now prove
// nothing, and sets the anchor back so that the deadline is past until
// later evidence (a reply to a later request, the next session's connect)
// proves the session again.
func (c *Conn) voidEvidence() {
	now := c.since(time.Now())
	c.floor.Store(now)
	c.anchor.Store(now - c.timeout.Load())
}

// suspendedClock is suspendedTotal; tests replace it.
var suspendedClock = suspendedTotal

// resumeSlack absorbs the time between reading the two clocks that
// suspendedTotal compares.
const resumeSlack = int64(10 * time.Millisecond)

// endEpochLocked fires the current epoch's loss signal and schedules the
// deletion of the nodes registered with it: if the session survives, they
// would otherwise block other clients although their holders gave up.
// closing says Close ended the epoch: what was held is released, not lost.
// The list ends first, then the signal, so that nothing is tracked once
// Done is closed (a Track may run without c.mu: ep.add): a holder that saw
// Done never finds its node accepted after it. The signal still comes
// before any deletion; what is logged is logged later, off the lock.
func (c *Conn) endEpochLocked(closing bool) {
	ep := c.ep
	if ep == nil {
		return
	}
	c.ep = nil
	c.live.Store(nil)
	nodes := ep.end()
	ep.cancel()
	level, msg := slog.LevelWarn, "zklock: lock lost"
	if closing {
		level, msg = slog.LevelInfo, "zklock: lock released by Close"
	}
	for _, t := range nodes {
		c.logs.add(level, msg, "path", c.primitivePath(t.Path), "node", t.Path, "session", fmt.Sprintf("0x%x", ep.sid))
		c.goDelete(t.Path, ep.sid, ep.told.Load(), true)
	}
	if c.cfg.OnEpochEnd != nil {
		c.cfg.OnEpochEnd(ep, closing)
	}
}

// primitivePath returns the path of the primitive a node of ours belongs
// to, as Config.PrimitivePath says (its parent without one).
func (c *Conn) primitivePath(node string) string {
	if c.cfg.PrimitivePath != nil {
		return c.cfg.PrimitivePath(node)
	}
	return path.Dir(node)
}

// track registers t to be deleted when ep ends (once: a t listed already
// stays listed); false if ep has ended. untrack forgets it. A grant
// decided before a freeze is refused after it: the deadline and a resume
// are looked at first (under mu only when one may end ep).
func (c *Conn) track(ep *epoch, t *Tracked) bool {
	if c.liveEpoch() != ep {
		c.mu.Lock()
		c.loseIfDueLocked()
		c.mu.Unlock()
	}
	return ep.add(t)
}

// add lists t unless ep has ended.
func (ep *epoch) add(t *Tracked) bool {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	if ep.ended {
		return false
	}
	if t.at == 0 {
		ep.nodes = append(ep.nodes, t)
		t.at = int32(len(ep.nodes))
	}
	return true
}

func (c *Conn) untrack(ep *epoch, t *Tracked) {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	i := int(t.at) - 1
	if i < 0 || i >= len(ep.nodes) || ep.nodes[i] != t {
		return // not listed, or its epoch ended
	}
	last := len(ep.nodes) - 1
	ep.nodes[i] = ep.nodes[last]
	ep.nodes[i].at = int32(i + 1)
	ep.nodes[last] = nil
	ep.nodes = ep.nodes[:last]
	t.at = 0
	if cap(ep.nodes) > 64 && len(ep.nodes) < cap(ep.nodes)/4 {
		ep.nodes = slices.Clip(slices.Clone(ep.nodes)) // what a burst grew goes with it
	}
}

// end marks ep ended and returns the nodes listed with it: every track
// that returned true, and no later one.
func (ep *epoch) end() []*Tracked {
	ep.mu.Lock()
	defer ep.mu.Unlock()
	ep.ended = true
	nodes := ep.nodes
	ep.nodes = nil
	for _, t := range nodes {
		t.at = 0
	}
	return nodes
}

// watchdog ends the epoch when the ownership deadline passes. It re-reads
// the deadline whenever its timer fires or the state changes, so replies
// push it forward without a timer reset per reply.
func (c *Conn) watchdog() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		c.mu.Lock()
		if c.loseIfDueLocked() {
			c.mu.Unlock()
			continue
		}
		c.resumeLocked()
		live, changed := c.ep != nil, c.changed
		t := time.Duration(c.timeout.Load())
		wait := time.Hour
		if !live && c.connected.Load() {
			wait = max(t/10, 10*time.Millisecond) // poll for replies to resume
		}
		if live {
			wait = time.Until(c.OwnershipDeadline())
		}
		// Timers run on the monotonic clock, which stands still while the
		// machine is suspended: look for a resume at least this often.
		wait = min(wait, max(min(time.Second, t/4), 10*time.Millisecond))
		c.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-changed:
			if !timer.Stop() {
				<-timer.C
			}
		case <-c.wake:
			if !timer.Stop() {
				<-timer.C
			}
		case <-c.bg.Done():
			return
		}
	}
}

// resumeLocked starts a new epoch when the deadline passed on a connection
// that never dropped (replies were merely late) and replies have since moved
// the deadline back into the future. Without it, acquisitions would wait for
// a reconnect that never comes.
func (c *Conn) resumeLocked() {
	if c.ep != nil || c.state != StateLost || !c.connected.Load() || (c.ready.Load() && c.timingErr(c.sv.Load()) != nil) {
		return
	}
	if time.Until(c.OwnershipDeadline()) > 0 {
		c.newEpochLocked()
		c.publishLocked(StateReconnected, c.sid)
	}
}

func (c *Conn) newEpochLocked() {
	ep := &epoch{sid: c.sid}
	ep.ctx, ep.cancel = context.WithCancel(context.Background())
	ep.done = ep.ctx.Done()
	ep.pub = EpochInfo{SessionID: ep.sid, Done: ep.done, Key: ep, Check: c.CheckDeadline} // once per epoch
	c.ep = ep
	c.live.Store(ep)
}
