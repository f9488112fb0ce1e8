package zk

import (
	"time"

	"github.com/zklock/zklock/internal/session"
)

// State is the state of a zklock Session's ZooKeeper session and
// connection, as its subscribers see it (zklock's Session.State and
// Session.Subscribe).
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
