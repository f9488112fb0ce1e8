package client

import (
	"fmt"
	"time"
)

// State is a change of the client's connection or session, reported to
// Config.OnState.
type State int32

// The states.
const (
	// StateDisconnected: a connection was lost, or an attempt to connect
	// failed (it is reported once per failed attempt). The session may
	// still be alive on the server; the client keeps trying.
	StateDisconnected State = iota
	// StateConnected: a connection is established and its session is
	// valid: the first session, the same session again, or (after
	// StateExpired) a new one.
	StateConnected
	// StateExpired: the server refused to resume the session: it has
	// expired, its ephemeral nodes and watches are gone, every watch has
	// been told. The client goes on with a new session. It is also
	// reported, with Err ErrExpiredLocally, when no server resumed the
	// session for longer than twice its timeout (a server behind the client's
	// last zxid refuses it forever): the client gives the session up as
	// if a server had refused it, and forgets its last zxid. The servers
	// have expired it by then, unless they had no quorum throughout: then
	// the old session, and its ephemeral nodes, live on until they do.
	// A resume that a server answered with another session id reports
	// the old session expired too (Err wraps ErrSessionExpired).
	StateExpired
	// StateAuthFailed: the server rejected a credential (Config.Credentials
	// or AddAuth). As in ZooKeeper's Java client this is final: the client
	// closes itself (StateClosed follows) and every request fails with
	// ErrAuthFailed.
	StateAuthFailed
	// StateClosed: the client has stopped, for Close or StateAuthFailed.
	// It is the last state reported.
	StateClosed
)

var stateNames = [...]string{"disconnected", "connected", "expired", "auth failed", "closed"}

// String returns the state's name, as used in logs.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int32(s))
}

// StateInfo is what is known with a State. Fields that do not apply are
// zero.
type StateInfo struct {
	// Server is the address connected to (StateConnected), lost or tried
	// (StateDisconnected), or that refused the session or a credential.
	Server string
	// SessionID is the session established (StateConnected) or lost.
	SessionID int64
	// Timeout is the session timeout the server negotiated
	// (StateConnected): the server expires the session when it has heard
	// nothing from the client for that long.
	Timeout time.Duration
	// Sent is when the connect request that established the connection was
	// handed to the socket (StateConnected): the server's clock for the
	// session restarted after it.
	Sent time.Time
	// Err is the cause of StateDisconnected and StateAuthFailed, and
	// ErrExpiredLocally for a StateExpired that no server reported (an
	// error wrapping ErrSessionExpired for a resume answered with another
	// session).
	Err error
}
