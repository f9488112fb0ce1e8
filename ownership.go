package zklock

import (
	"context"
	"fmt"
	"log/slog"
	"path"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
)

// epoch is a stretch of time during which the client may assume the server
// holds its session. It ends at the ownership deadline, at expiry or at
// Close, and never restarts: a later stretch is a new epoch.
type epoch struct {
	sid   int64
	done  chan struct{}
	nodes map[string]struct{} // nodes to delete when the epoch ends
}

// OwnershipDeadline returns the instant after which the server may have
// expired the session: the send time of the request behind the latest reply,
// plus the negotiated session timeout, minus the safety margin. Any reply
// moves it forward; pings keep it moving while the connection is healthy.
//
// The anchor is the request's send time rather than the reply's arrival
// because the server restarts its expiry clock when it receives a packet,
// which happens after we send it: the server cannot expire the session
// before anchor+timeout. The margin (by default a fifth of the timeout; see
// WithSafetyMargin) leaves the holder time to stop work after the signal and
// absorbs timer lateness on a loaded machine.
func (s *Session) OwnershipDeadline() time.Time {
	t := time.Duration(s.timeout.Load())
	return s.base.Add(time.Duration(s.anchor.Load()) + t - s.margin(t))
}

func (s *Session) margin(timeout time.Duration) time.Duration {
	if s.opts.margin > 0 {
		return s.opts.margin
	}
	return timeout / 5
}

// Ownership returns a channel that is closed when the current ownership
// epoch ends: at the ownership deadline, when the session expires, or at
// Close. While no epoch is live (for example after the deadline passed and
// before the client reconnects) it returns a closed channel.
func (s *Session) Ownership() <-chan struct{} {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.ep == nil {
		c := make(chan struct{})
		close(c)
		return c
	}
	return s.ep.done
}

// awaitEpoch waits until an epoch is live and returns it.
func (s *Session) awaitEpoch(ctx context.Context) (*epoch, error) {
	for {
		s.mu.Lock()
		s.loseIfDueLocked()
		ep, st, changed := s.ep, s.state, s.changed
		s.mu.Unlock()
		if st == StateClosed {
			return nil, ErrSessionClosed
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

// loseIfDueLocked ends the live epoch if its deadline has passed. The
// watchdog does this on its timer; awaitEpoch does it too, because a process
// frozen (SIGSTOP, a long GC pause) past the deadline runs again before the
// watchdog's timer goroutine does, and must not be handed a grant on an
// epoch that is already over.
func (s *Session) loseIfDueLocked() bool {
	if s.ep == nil || time.Until(s.OwnershipDeadline()) > 0 {
		return false
	}
	s.log.Warn("zklock: ownership deadline passed; locks held through the session are lost",
		"session", fmt.Sprintf("0x%x", s.sid))
	s.endEpochLocked(false)
	s.publishLocked(StateLost, s.sid)
	return true
}

// endEpochLocked fires the current epoch's loss signal and schedules the
// deletion of the nodes registered with it: if the session survives, they
// would otherwise block other clients although their holders gave up.
// closing says Close ended the epoch: what was held is released, not lost.
func (s *Session) endEpochLocked(closing bool) {
	ep := s.ep
	if ep == nil {
		return
	}
	s.ep = nil
	close(ep.done)
	level, msg := slog.LevelWarn, "zklock: lock lost"
	if closing {
		level, msg = slog.LevelInfo, "zklock: lock released by Close"
	}
	for node := range ep.nodes {
		s.log.Log(context.Background(), level, msg,
			"path", primitivePath(node), "node", node, "session", fmt.Sprintf("0x%x", ep.sid))
		s.goDelete(node, ep.sid)
	}
	s.reportEpochEndLocked(ep, closing)
}

// primitivePath returns the path of the primitive a node of ours belongs
// to: its parent, or for a semaphore lease (<path>/leases/<lease>) its
// grandparent.
func primitivePath(node string) string {
	dir := path.Dir(node)
	if c, ok := queue.Parse(path.Base(node)); ok && c.Kind == queue.KindLease {
		return path.Dir(dir)
	}
	return dir
}

// track registers path to be deleted when ep ends; untrack forgets it.
func (s *Session) track(ep *epoch, path string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.loseIfDueLocked() // a grant decided before a freeze is refused after it
	if s.ep != ep {
		return false
	}
	ep.nodes[path] = struct{}{}
	return true
}

func (s *Session) untrack(ep *epoch, path string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	delete(ep.nodes, path)
}

// watchdog ends the epoch when the ownership deadline passes. It re-reads
// the deadline whenever its timer fires or the state changes, so replies
// push it forward without a timer reset per reply.
func (s *Session) watchdog() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		s.mu.Lock()
		s.resumeLocked()
		live, changed := s.ep != nil, s.changed
		wait := time.Hour
		if !live && s.conn.State() == zk.StateHasSession {
			wait = max(time.Duration(s.timeout.Load())/10, 10*time.Millisecond) // poll for replies to resume
		}
		if live {
			wait = time.Until(s.OwnershipDeadline())
			if s.loseIfDueLocked() {
				s.mu.Unlock()
				continue
			}
		}
		s.mu.Unlock()
		timer.Reset(wait)
		select {
		case <-timer.C:
		case <-changed:
			if !timer.Stop() {
				<-timer.C
			}
		case <-s.bg.Done():
			return
		}
	}
}

// resumeLocked starts a new epoch when the deadline passed on a connection
// that never dropped (replies were merely late) and replies have since moved
// the deadline back into the future. Without it, acquisitions would wait for
// a reconnect that never comes.
func (s *Session) resumeLocked() {
	if s.ep != nil || s.state != StateLost || s.conn.State() != zk.StateHasSession {
		return
	}
	if time.Until(s.OwnershipDeadline()) > 0 {
		s.newEpochLocked()
		s.publishLocked(StateReconnected, s.sid)
	}
}

func (s *Session) newEpochLocked() {
	s.ep = &epoch{sid: s.sid, done: make(chan struct{}), nodes: make(map[string]struct{})}
}

// onEvent is go-zookeeper's event callback. It runs on the client's own
// goroutine, so it only updates state and queues events; it never blocks.
func (s *Session) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.state == StateClosed {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		s.establishedLocked(s.wireSID.Load())
	case zk.StateDisconnected:
		if s.state == StateConnected || s.state == StateReconnected {
			s.publishLocked(StateSuspended, s.sid)
		}
	case zk.StateExpired:
		s.endEpochLocked(false)
		s.publishLocked(StateExpired, s.sid)
	case zk.StateAuthFailed:
		s.log.Error("zklock: authentication failed", "session", s.sid)
	}
}

func (s *Session) establishedLocked(sid int64) {
	switch {
	case s.sid == 0:
		s.sid = sid
		s.publishLocked(StateConnected, sid)
	case sid == s.sid:
		s.publishLocked(StateReconnected, sid)
	default:
		if s.state != StateExpired { // go-zookeeper reports expiry first; be sure
			s.endEpochLocked(false)
			s.publishLocked(StateExpired, s.sid)
		}
		s.sid = sid
		s.publishLocked(StateConnected, sid)
	}
	if s.ep == nil {
		s.newEpochLocked()
	}
}

// observer receives what the wire layer learns about each connection.
type observer Session

func (o *observer) Connected(sid int64, timeout time.Duration, sent time.Time) {
	s := (*Session)(o)
	s.wireSID.Store(sid)
	if sid != 0 {
		s.timeout.Store(int64(timeout))
		s.anchor.Store(int64(sent.Sub(s.base)))
	}
}

func (o *observer) Replied(sent time.Time) {
	s := (*Session)(o)
	t := int64(sent.Sub(s.base))
	for {
		old := s.anchor.Load()
		if t <= old || s.anchor.CompareAndSwap(old, t) {
			return
		}
	}
}

// Created records what the wire saw of a create's reply, for the create
// that registered its request path (expectCreate). Creates nobody
// registered (containers, plain Conn use) are not recorded, so nothing
// accumulates and no record is ever dropped to bound the map.
func (o *observer) Created(path string, zxid, sid int64) {
	s := (*Session)(o)
	s.mu.Lock()
	defer s.mu.Unlock()
	if r, ok := s.creates[path]; ok {
		r.c, r.seen = created{zxid: zxid, sid: sid}, true
	}
}

func (o *observer) Sending(path string) {
	s := (*Session)(o)
	s.mu.Lock()
	defer s.mu.Unlock()
	if ch, ok := s.sending[path]; ok {
		close(ch)
		delete(s.sending, path)
	}
}

// onSend returns a channel closed when a create request for path is
// written to the connection, and a function that forgets the request.
func (s *Session) onSend(path string) (<-chan struct{}, func()) {
	ch := make(chan struct{})
	s.mu.Lock()
	s.sending[path] = ch
	s.mu.Unlock()
	return ch, func() {
		s.mu.Lock()
		if s.sending[path] == ch {
			delete(s.sending, path)
		}
		s.mu.Unlock()
	}
}
