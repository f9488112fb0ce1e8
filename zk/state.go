package zk

import (
	"context"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/session"
)

// State is the state of a zklock Session's ZooKeeper session and
// connection, as Client.State and Client.Subscribe report it.
type State int

const (
	// StateConnecting: no session has been established yet.
	StateConnecting State = iota
	// StateConnected: a session is established; after StateExpired it
	// carries the new session id.
	StateConnected
	// StateSuspended: the connection was lost; the session may still be
	// alive on the server, so ephemeral nodes may still exist.
	StateSuspended
	// StateLost: the ownership deadline passed while no reply arrived. The
	// server may have expired the session and granted our locks to others;
	// every acquisition made through the session has had its loss signal
	// fired. The session may still come back (StateReconnected) or be
	// reported expired (StateExpired).
	StateLost
	// StateReconnected: the connection is back with the same session id;
	// ephemeral nodes were kept.
	StateReconnected
	// StateExpired: the server expired the session; its ephemeral nodes are
	// gone. Also reported when no server resumed the session for longer
	// than its timeout (a server behind what the session has seen refuses
	// it): the session is given up, as the servers have expired it by then
	// unless they had no quorum throughout (its nodes live on until they
	// have one). A new session is being established (StateConnected
	// follows).
	StateExpired
	// StateClosed: the zklock Session was closed. Nothing follows.
	StateClosed
)

// String returns the state's lower-case name, as used in logs.
func (s State) String() string { return session.State(s).String() }

// Event is one session state transition.
type Event struct {
	State State
	// SessionID is the session the event is about: the new one for
	// StateConnected, the lost one for StateExpired.
	SessionID int64
	// Time is when the client observed the transition.
	Time time.Time
}

// SessionID returns the id of the current ZooKeeper session, or of the
// last one while none is established. It changes after StateExpired: the
// zklock Session then establishes a new ZooKeeper session.
func (c *Client) SessionID() int64 {
	if c.unmade() {
		return 0
	}
	return c.conn.SessionID()
}

// State returns the current state of the session and its connection.
func (c *Client) State() State {
	if c.unmade() {
		return StateClosed // of no session: nothing follows
	}
	return State(c.conn.State())
}

// Subscribe returns a channel of every state transition of the session
// from now on, in order (go-zookeeper's event channel, with every
// subscriber seeing every event). Events are queued without bound, so
// none is dropped and a slow reader never delays the session or other
// subscribers. The channel is closed after the StateClosed event or when
// ctx ends. Subscribing once the zklock Session is closed yields its
// StateClosed event alone.
func (c *Client) Subscribe(ctx context.Context) (<-chan Event, error) {
	if c.unmade() {
		return nil, errUnmadeClient
	}
	if ctx == nil {
		return nil, errs.ErrNilContext
	}
	return c.events.Subscribe(ctx), nil
}

// Timing is the servers' timing a zklock Session's ownership deadline
// rests on (zklock's Session.OwnershipDeadline; docs/ownership.md): the
// session timeout, the servers' tickTime and syncLimit, and where zklock
// has them from.
type Timing struct {
	// Timeout is the session timeout the ownership deadline uses: the
	// lowest any server granted the session, or would grant it as far as
	// the servers' conf tells.
	Timeout time.Duration
	// Tick and SyncLimit are the servers' tickTime and syncLimit: a
	// follower cut off from its leader goes on answering for up to
	// SyncLimit*Tick.
	Tick      time.Duration
	SyncLimit int
	// Source is "conf" (the servers' 'conf' told them, re-read at every
	// connect), "stated" (zklock's WithEnsembleTiming, used when a server
	// refuses 'conf', or when one was not reached and no server reached
	// told an ensemble's timing: a standalone server's 'conf' has none),
	// "standalone" (no ensemble: no follower's replies
	// trail, and Tick and SyncLimit do not apply) or "unknown" (a server
	// stopped telling them under a live session: no ownership epoch begins
	// until one tells again).
	Source string
}

// Timing returns the session timeout and the servers' timing in use, and
// their source.
func (c *Client) Timing() Timing {
	if c.unmade() {
		return Timing{}
	}
	t, src := c.conn.Timing()
	return Timing{Timeout: c.conn.Timeout(), Tick: t.Tick, SyncLimit: t.SyncLimit, Source: src}
}
