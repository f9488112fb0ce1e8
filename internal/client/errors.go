package client

import (
	"errors"
	"fmt"
	"strings"
)

// codeError is a ZooKeeper error code (KeeperException.Code), or a
// condition of this client. The sentinels below are the only values with a
// known code; use errors.Is to test for them.
type codeError struct {
	code int32
	msg  string
}

func (e *codeError) Error() string { return "zklock: zk: " + e.msg }

func codeErr(code int32, msg string) *codeError { return &codeError{code: code, msg: msg} }

// Errors the server returns, one per ZooKeeper error code
// (KeeperException.Code). A request fails with an *Error wrapping one of
// them (errors.Is finds it).
var (
	// ErrSystemError (-1): a server-side failure with no code of its own.
	ErrSystemError error = codeErr(-1, "system error")

	// ErrRuntimeInconsistency (-2): the server found its state inconsistent.
	ErrRuntimeInconsistency error = codeErr(-2, "runtime inconsistency")

	// ErrDataInconsistency (-3): the server found its data inconsistent.
	ErrDataInconsistency error = codeErr(-3, "data inconsistency")

	// ErrMarshallingError (-5): the server could not decode the request.
	ErrMarshallingError error = codeErr(-5, "marshalling error")

	// ErrUnimplemented (-6): a request the server does not support: a TTL node without zookeeper.extendedTypesEnabled, addWatch before 3.6.
	ErrUnimplemented error = codeErr(-6, "unimplemented: the server does not support the request")

	// ErrOperationTimeout (-7): the server gave up on the request.
	ErrOperationTimeout error = codeErr(-7, "operation timeout")

	// ErrBadArguments (-8): an invalid path, create mode or TTL; also returned by the client before sending what cannot be valid.
	ErrBadArguments error = codeErr(-8, "bad arguments")

	// ErrUnknownSession (-12): the server does not know the session (internal to the servers).
	ErrUnknownSession error = codeErr(-12, "unknown session")

	// ErrNewConfigNoQuorum (-13): reconfig: the new configuration has no quorum.
	ErrNewConfigNoQuorum error = codeErr(-13, "no quorum of the new configuration")

	// ErrReconfigInProgress (-14): reconfig: another is in progress.
	ErrReconfigInProgress error = codeErr(-14, "reconfiguration in progress")

	// ErrAPIError (-100): the base of the API error codes; not sent by servers.
	ErrAPIError error = codeErr(-100, "api error")

	// ErrNoNode (-101): the node (or, for a create, its parent) does not exist.
	ErrNoNode error = codeErr(-101, "node does not exist")

	// ErrNoAuth (-102): the node's ACL does not grant the session the permission.
	ErrNoAuth error = codeErr(-102, "not authorized")

	// ErrBadVersion (-103): the node's version is not the one given.
	ErrBadVersion error = codeErr(-103, "version conflict")

	// ErrNoChildrenForEphemerals (-108): a create under an ephemeral node.
	ErrNoChildrenForEphemerals error = codeErr(-108, "ephemeral nodes may not have children")

	// ErrNodeExists (-110): a create of a node that exists.
	ErrNodeExists error = codeErr(-110, "node already exists")

	// ErrNotEmpty (-111): a delete of a node that has children.
	ErrNotEmpty error = codeErr(-111, "node has children")

	// ErrSessionExpired (-112): the session expired: requests queued for it fail with it (see StateExpired).
	ErrSessionExpired error = codeErr(-112, "session expired")

	// ErrInvalidCallback (-113): not sent to this client.
	ErrInvalidCallback error = codeErr(-113, "invalid callback")

	// ErrInvalidACL (-114): an empty ACL, an unknown scheme, or the auth scheme without an authenticated identity.
	ErrInvalidACL error = codeErr(-114, "invalid ACL")

	// ErrAuthFailed (-115): the server rejected a credential; final (see StateAuthFailed).
	ErrAuthFailed error = codeErr(-115, "authentication failed")

	// ErrSessionMoved (-118): the session is now served through another connection.
	ErrSessionMoved error = codeErr(-118, "session moved to another server")

	// ErrNotReadOnly (-119): a write to a read-only server.
	ErrNotReadOnly error = codeErr(-119, "not a read-only call")

	// ErrEphemeralOnLocalSession (-120): an ephemeral create in a local session.
	ErrEphemeralOnLocalSession error = codeErr(-120, "ephemeral node on a local session")

	// ErrNoWatcher (-121): removeWatches of a watch the server does not hold (Watch.Remove treats it as done).
	ErrNoWatcher error = codeErr(-121, "no such watch")

	// ErrRequestTimeout (-122): the server timed the request out.
	ErrRequestTimeout error = codeErr(-122, "request timeout")

	// ErrReconfigDisabled (-123): reconfig is disabled on the server.
	ErrReconfigDisabled error = codeErr(-123, "reconfiguration disabled")

	// ErrSessionClosedRequireSASLAuth (-124): the server requires SASL, which this client does not speak.
	ErrSessionClosedRequireSASLAuth error = codeErr(-124, "session closed: the server requires SASL authentication")

	// ErrQuotaExceeded (-125): a write beyond the path's hard quota.
	ErrQuotaExceeded error = codeErr(-125, "quota exceeded")

	// ErrThrottledOp (-127): the server shed the request under load, unperformed: retry after a pause.
	ErrThrottledOp error = codeErr(-127, "operation throttled by the server")
)

// ErrConnectionLoss (ZooKeeper's code -4) fails a request that was sent,
// or may have been, when its connection was lost: whether the server
// performed it is unknown. A request that was not yet sent is not failed:
// it waits for the next connection.
var ErrConnectionLoss error = codeErr(-4, "connection loss: the outcome of the request is unknown")

// Errors of the client itself.
var (
	// ErrClosed fails every request made after Close began, and those
	// waiting for a connection then; a request in flight when the
	// connection is closed fails with it too (its outcome is unknown).
	ErrClosed error = codeErr(0, "client closed")
	// ErrRolledBack is the error of each op of a failed Multi that did not
	// fail itself: the transaction was not applied.
	ErrRolledBack error = codeErr(0, "rolled back: another operation of the multi failed")
	// ErrWatchRemoved ends a watch removed by Watch.Remove, or by a
	// RemoveWatches request on its path and kind.
	ErrWatchRemoved error = codeErr(0, "watch removed")
	// ErrWatchEnded is returned by Watch.Next once the watch's final event
	// has been returned.
	ErrWatchEnded error = codeErr(0, "watch ended")
	// ErrRequestTooLarge fails, unsent, a request larger than
	// Config.MaxPacket (the servers' jute.maxbuffer): a server drops the
	// connection on reading its length, and every request in flight with it.
	ErrRequestTooLarge error = codeErr(0, "request too large (the servers' jute.maxbuffer)")
	// ErrExpiredLocally is the Err of a StateExpired that no server
	// reported: no server resumed the session for longer than twice its timeout
	// (StateExpired says what follows). It wraps ErrSessionExpired.
	ErrExpiredLocally error = fmt.Errorf("%w: no server resumed it within twice its timeout", ErrSessionExpired)
	// ErrInvalidConfig is wrapped by Dial's error when Config is invalid.
	ErrInvalidConfig = errors.New("zklock: zk: invalid client configuration")
	// ErrStopped is returned by a request whose ctx carries a stop channel
	// (WithStop) that closed before the request completed: the request was
	// abandoned, as when ctx ends.
	ErrStopped = errors.New("zklock: zk: request stopped")
)

// byCode is every server error code this client knows.
var byCode = func() map[int32]error {
	m := make(map[int32]error)
	for _, err := range []error{
		ErrSystemError, ErrRuntimeInconsistency, ErrDataInconsistency, ErrConnectionLoss,
		ErrMarshallingError, ErrUnimplemented, ErrOperationTimeout, ErrBadArguments,
		ErrUnknownSession, ErrNewConfigNoQuorum, ErrReconfigInProgress, ErrAPIError,
		ErrNoNode, ErrNoAuth, ErrBadVersion, ErrNoChildrenForEphemerals, ErrNodeExists,
		ErrNotEmpty, ErrSessionExpired, ErrInvalidCallback, ErrInvalidACL, ErrAuthFailed,
		ErrSessionMoved, ErrNotReadOnly, ErrEphemeralOnLocalSession, ErrNoWatcher,
		ErrRequestTimeout, ErrReconfigDisabled, ErrSessionClosedRequireSASLAuth,
		ErrQuotaExceeded, ErrThrottledOp,
	} {
		m[err.(*codeError).code] = err
	}
	return m
}()

// fromCode returns the error for a server error code: nil for 0, the
// sentinel for a known code, and a new error (matching no sentinel) for an
// unknown one.
func fromCode(code int32) error {
	if code == 0 {
		return nil
	}
	if err, ok := byCode[code]; ok {
		return err
	}
	return codeErr(code, fmt.Sprintf("unknown error code %d", code))
}

// Error is the failure of one request: what it was, the node it was about
// ("" for requests about no node), and the cause, a sentinel of this
// package (or, for a ctx that ended, never: those return ctx.Err()).
type Error struct {
	Op   string // "create", "get", "multi", ...
	Path string
	Err  error
}

func (e *Error) Error() string {
	msg := strings.TrimPrefix(e.Err.Error(), "zklock: zk: ")
	if e.Path == "" {
		return "zklock: zk: " + e.Op + ": " + msg
	}
	return "zklock: zk: " + e.Op + " " + e.Path + ": " + msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }
