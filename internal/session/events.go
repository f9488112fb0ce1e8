package session

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// State is a session state. zklock.State mirrors it, value for value.
type State int

// The states, in zklock.State's order; zklock.State documents each.
const (
	StateConnecting State = iota
	StateConnected
	StateSuspended
	StateLost
	StateReconnected
	StateExpired
	StateClosed
)

var stateNames = [...]string{"connecting", "connected", "suspended", "lost", "reconnected", "expired", "closed"}

// String returns the state's lower-case name, as used in logs.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

// publishLocked records a transition and reports it to Config.OnState.
// c.mu must be held.
func (c *Conn) publishLocked(st State, sid int64) {
	c.state = st
	if st == StateSuspended {
		// At WARN, as the default logger shows it: a program whose calls
		// now wait (an Unlock retrying) otherwise says nothing until the
		// ownership deadline, tens of seconds later.
		c.logs.add(slog.LevelWarn, "zklock: connection to ZooKeeper lost; reconnecting "+
			"(locks held through the session are lost at the ownership deadline unless it reconnects first)",
			"session", fmt.Sprintf("0x%x", sid))
	} else {
		c.logs.add(slog.LevelInfo, "zklock: session "+st.String(), "session", fmt.Sprintf("0x%x", sid))
	}
	if c.cfg.OnState != nil {
		c.cfg.OnState(st, sid, time.Now())
	}
	close(c.changed)
	c.changed = make(chan struct{})
	// Every waiter woke with changed and looks again; the watch it sets
	// then is a new one: a restored watch is not trusted alone (the
	// server may refuse to restore it, and a watch request sent after an
	// expiry runs in the new session).
	clear(c.watches)
	c.fireChildrenLocked("", client.Event{Type: client.EventNotWatching})
}

// onClientState is the client's OnState hook. It runs on the client's
// connection goroutine, so it only updates state and queues; it never
// blocks and never calls the client. The client reports a connection
// before it reads any reply on it, and its loss after the last.
func (c *Conn) onClientState(st client.State, info client.StateInfo) {
	switch st {
	case client.StateConnected:
		c.newLink(info.Server).Connected(info.SessionID, info.Timeout, info.Sent)
		c.connected.Store(true)
		c.recheck() // the timeout granted may leave no safe deadline
	default:
		c.connected.Store(false)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateClosed {
		return
	}
	switch st {
	case client.StateConnected:
		c.establishedLocked(info.SessionID)
	case client.StateDisconnected:
		if c.state == StateConnected || c.state == StateReconnected {
			c.publishLocked(StateSuspended, c.sid)
		}
	case client.StateExpired:
		// The session is gone: its deadline is past, not where the last
		// reply put it, until the next session's connect (sent after
		// this) anchors it again.
		c.voidEvidence()
		c.endEpochLocked(false)
		c.publishLocked(StateExpired, c.sid)
	case client.StateAuthFailed:
		c.logs.add(slog.LevelError, "zklock: authentication failed: the session cannot go on",
			"session", fmt.Sprintf("0x%x", c.sid), "server", info.Server)
	case client.StateClosed:
		c.brokenLocked()
	}
}

// brokenLocked handles a client that closed itself (the server rejected a
// credential: final, as in ZooKeeper's Java client). No epoch can follow:
// the live one ends now, and awaitEpoch fails from now on. While Dial
// waits, Dial fails instead.
func (c *Conn) brokenLocked() {
	c.broken = fmt.Errorf("zklock: the ZooKeeper client stopped: %w", client.ErrAuthFailed)
	if c.dialing {
		return
	}
	if c.ep != nil {
		c.endEpochLocked(false)
		c.publishLocked(StateLost, c.sid)
	}
	close(c.changed) // wake awaitEpoch
	c.changed = make(chan struct{})
}

// onReply is the client's OnReply hook: every reply is evidence for the
// connection it came on (evidence.go).
func (c *Conn) onReply(sent, received time.Time, _, _ int32, _ int64, _ error) {
	if l := c.cur.Load(); l != nil {
		l.Replied(sent, received)
	}
}

func (c *Conn) establishedLocked(sid int64) {
	switch {
	case c.sid == 0:
		c.sid = sid
		c.publishLocked(StateConnected, sid)
	case sid == c.sid:
		c.publishLocked(StateReconnected, sid)
	default:
		if c.state != StateExpired { // the client reports expiry first; be sure
			c.endEpochLocked(false)
			c.publishLocked(StateExpired, c.sid)
		}
		c.sid = sid
		c.publishLocked(StateConnected, sid)
	}
	if c.ep != nil {
		return
	}
	if err := c.timingErr(c.sv.Load()); err != nil && c.ready.Load() {
		// Connected, but no deadline can be safe: lost until the servers
		// tell a timing under which one can (resumeLocked begins it then).
		c.publishLocked(StateLost, sid)
		c.logs.add(slog.LevelWarn, "zklock: the servers' timing leaves no safe ownership deadline; no lock can be held until it does",
			"session", fmt.Sprintf("0x%x", sid), "reason", err.Error())
		return
	}
	c.newEpochLocked()
}
