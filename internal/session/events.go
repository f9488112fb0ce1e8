package session

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/go-zookeeper/zk"
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
	c.logs.add(slog.LevelInfo, "zklock: session "+st.String(), "session", fmt.Sprintf("0x%x", sid))
	if c.cfg.OnState != nil {
		c.cfg.OnState(st, sid, time.Now())
	}
	close(c.changed)
	c.changed = make(chan struct{})
	// Every waiter woke with changed and looks again; the watch it sets
	// then is a new one, not one go-zookeeper may have failed to restore.
	clear(c.watches)
	c.fireChildrenLocked("", zk.Event{Type: zk.EventNotWatching, State: zk.StateDisconnected})
}

// onEvent is go-zookeeper's event callback. It runs on the client's own
// goroutine, so it only updates state and queues events; it never blocks.
func (c *Conn) onEvent(ev zk.Event) {
	if ev.Type != zk.EventSession {
		c.onWatchEvent(ev)
		return
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.state == StateClosed {
		return
	}
	switch ev.State {
	case zk.StateHasSession:
		c.establishedLocked(c.wireSID.Load())
	case zk.StateDisconnected:
		if c.state == StateConnected || c.state == StateReconnected {
			c.publishLocked(StateSuspended, c.sid)
		}
	case zk.StateExpired:
		c.endEpochLocked(false)
		c.publishLocked(StateExpired, c.sid)
	case zk.StateAuthFailed:
		c.logs.add(slog.LevelError, "zklock: authentication failed", "session", fmt.Sprintf("0x%x", c.sid))
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
		if c.state != StateExpired { // go-zookeeper reports expiry first; be sure
			c.endEpochLocked(false)
			c.publishLocked(StateExpired, c.sid)
		}
		c.sid = sid
		c.publishLocked(StateConnected, sid)
	}
	if c.ep == nil {
		c.newEpochLocked()
	}
}
