// Package zk is the ZooKeeper client of a zklock Session, for what the
// recipes of package zklock do not do: reads and writes of your own nodes,
// atomic writes under a lock, watches, ACLs, and the session's connection
// states.
//
// A Client comes from a Session and shares its connection, its
// credentials and its default ACL:
//
//	c := s.Client() // s is a *zklock.Session
//	data, stat, err := c.Get(ctx, "/config")
//
// Client has ZooKeeper's raw operations (Create, Get, Set, Delete, Exists,
// Children, GetACL, SetACL), their watching forms (ExistsW, GetW,
// ChildrenW, each returning a one-shot Watch), and Multi, one atomic
// transaction of Ops. The Guard of a zklock hold is a *CheckOp: put it
// first in a Multi and the writes after it commit only while the hold's
// node stands, which is how to write to ZooKeeper under a lock:
//
//	_, err := s.Client().Multi(ctx, m.Guard(), &zk.SetDataOp{Path: "/state", Data: d, Version: -1})
//
// Requests are not retried: one cut by a lost connection fails with
// ErrConnectionLoss, its outcome unknown. The errors (errors.go) are
// ZooKeeper's error codes and the few of a bad call, grouped by what a
// caller does about them; test for them with errors.Is.
//
// ACL, WorldACL, AuthACL and DigestACL build access control lists (zklock's
// WithACL gives every node the session creates one). State and Event are
// the session's connection states as zklock's Session.State and
// Session.Subscribe report them.
package zk
