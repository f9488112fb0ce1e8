package zk

import (
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// The errors of a Client, of its Multi and Watch, and those zklock's
// recipes wrap when ZooKeeper refused them. Each is wrapped with the
// request and its path: test for them with errors.Is. They are grouped by
// what a caller does about them.

// Fix the call: nothing was sent, or the server refused the request as
// given, and it would refuse it again.
var (
	// ErrInvalidArgument: a nil Op in Multi (the Guard of nothing held) or
	// a CreateMode that is none of the Mode constants, in Create or a
	// CreateOp. Nothing was sent. It is zklock.ErrInvalidArgument.
	ErrInvalidArgument = errs.ErrInvalidArgument
	// ErrNilContext: a nil ctx. Nothing was sent. errors.Is finds
	// zklock.ErrInvalidArgument (ErrInvalidArgument) in it.
	ErrNilContext = errs.ErrNilContext
	// ErrBadArguments: the server refused the request's arguments (a
	// path ZooKeeper does not accept, say); also returned before sending a
	// request whose path is not absolute.
	ErrBadArguments = client.ErrBadArguments
	// ErrInvalidACL: an empty ACL, an unknown scheme, or AuthACL from a
	// session that authenticated as nobody.
	ErrInvalidACL = client.ErrInvalidACL
	// ErrNoAuth: the node's ACL does not grant the session the permission.
	ErrNoAuth = client.ErrNoAuth
	// ErrUnimplemented: the server does not support the request.
	ErrUnimplemented = client.ErrUnimplemented
	// ErrRequestTooLarge: the request is larger than the session's
	// maximum request size (zklock's WithMaxRequestSize: the servers'
	// jute.maxbuffer), and was not sent: the server would have dropped the
	// connection, and every request in flight on it.
	ErrRequestTooLarge = client.ErrRequestTooLarge
)

// The node is not as the request needs it: read it again and decide.
var (
	// ErrNoNode: the node does not exist (for a create: its parent). A
	// hold's Guard fails a Multi with it once the hold's node is gone.
	ErrNoNode = client.ErrNoNode
	// ErrNodeExists: a create of a node that exists.
	ErrNodeExists = client.ErrNodeExists
	// ErrBadVersion: the node's version is not the one given (a Set,
	// Delete, SetDataOp, DeleteOp or CheckOp with a version).
	ErrBadVersion = client.ErrBadVersion
	// ErrNotEmpty: a delete of a node that has children.
	ErrNotEmpty = client.ErrNotEmpty
	// ErrNoChildrenForEphemerals: a create under an ephemeral node.
	ErrNoChildrenForEphemerals = client.ErrNoChildrenForEphemerals
	// ErrRolledBack is the OpResult.Err of each op of a failed Multi that
	// did not fail itself: nothing was applied.
	ErrRolledBack = client.ErrRolledBack
)

// The connection failed under the request: its outcome is unknown or it
// was not performed; look, then retry. A Client retries nothing itself;
// zklock's recipes retry these within their ctx.
var (
	// ErrConnectionLoss: the connection was lost while the request was in
	// flight: whether the server performed it is unknown. A request made
	// while disconnected is not failed; it waits for a connection, or its
	// ctx.
	ErrConnectionLoss = client.ErrConnectionLoss
	// ErrSessionMoved: the session is now served through another
	// connection; the request was not performed.
	ErrSessionMoved = client.ErrSessionMoved
)

// The session is gone: give up what rested on it (its ephemeral nodes, its
// locks).
var (
	// ErrSessionExpired: the session expired while the request waited for a
	// connection; it was not performed.
	ErrSessionExpired = client.ErrSessionExpired
	// ErrAuthFailed: the server rejected a credential (zklock's
	// WithAuth). zklock.NewSession returns it; on a later reconnect
	// it is final: the session's ownership ends and its requests fail with
	// it.
	ErrAuthFailed = client.ErrAuthFailed
	// ErrNotZooKeeper: every server answered in another protocol (an HTTP
	// server, such as ZooKeeper's AdminServer on 8080, instead of the
	// client port, 2181 by default), so none of them will ever be
	// ZooKeeper. zklock.NewSession returns it at once, not at the end of
	// its ctx, naming each address and what it answered; while any server
	// has not answered so (one that is down may come up), it keeps trying.
	ErrNotZooKeeper = errs.ErrNotZooKeeper
	// ErrSessionClosed: the zklock Session was closed; no request is sent
	// any more. It is zklock.ErrSessionClosed.
	ErrSessionClosed = errs.ErrSessionClosed
)
