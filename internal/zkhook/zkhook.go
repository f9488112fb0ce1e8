// Package zkhook lets the root package make a zk.Client over a session's
// connection without zk exporting a constructor of its internals: zk sets
// NewClient in its init, and the root package, which imports zk (so zk's
// init has run before any of its own code), calls it. zk cannot import the
// root package, which imports zk.
package zkhook

import (
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/session"
)

// NewClient returns a *zk.Client making its requests through conn, whose
// creates without an ACL of their own get acl (the session's WithACL).
var NewClient func(conn *session.Conn, acl []client.ACL) any
