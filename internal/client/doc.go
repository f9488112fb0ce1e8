// Package client is zklock's ZooKeeper client, written from ZooKeeper's
// protocol definition (the jute records of zookeeper.jute, the opcodes of
// ZooDefs and the error codes of KeeperException, release 3.8).
//
// A Client is one session. Dial connects to one of the servers and
// establishes the session; when the connection is lost the client
// reconnects (every server in turn, then with backoff) and resumes the
// session with its id and password, until the server says the session has
// expired; then it starts a new one. Config.OnState is told of each step.
//
// # Requests
//
// Every request takes a ctx and is cancellable: when ctx ends the request
// returns ctx.Err() at once and its reply, if it comes, is dropped. Many
// requests are in flight at once on the connection: a single writer
// encodes whatever is queued into one buffer and writes it at once, and a
// single reader matches each reply to the oldest request sent (ZooKeeper
// answers a session's requests in order). No goroutine is started per
// request, and requests are encoded into reused buffers.
//
// A request made while disconnected waits for the next connection. A
// request in flight when the connection is lost fails with
// ErrConnectionLoss: the server may or may not have performed it. Requests
// still queued when the session expires fail with ErrSessionExpired; a
// request queued after that runs in the new session.
//
// GoCreate and GoChildren queue a request and return at once, with a Call
// that completes with its outcome (it takes no ctx and is never
// abandoned): requests queued one after the other without waiting form a
// pipeline, answered in order, in one round trip.
//
// Config.OnReply sees every reply with the time its request was handed to
// the socket and the time it was read: what an observer needs to bound
// when the server last heard from the session.
//
// # Watches
//
// GetW, ExistsW and ChildrenW set one-shot watches; AddWatch sets
// persistent ones. Each call returns its own *Watch, whose events queue
// without bound (none is ever dropped) and are read with Watch.Next.
// Config.OnWatch sees the same events. An event is delivered before the
// reply of any request that the server answered after it: when a request
// returns, every event the server sent before answering it is on its
// Watch.
//
// When the client reconnects to the same session, it sets every watch
// again (setWatches, with the last zxid it read, so the server fires at
// once those whose node changed meanwhile) in the first packets of the new
// connection, after the credentials and before any queued request. When
// the session expires or the client closes, every watch ends with an
// EventNotWatching.
//
// # Limits
//
// No chroot, no read-only mode, no SASL, no reconfig, no multi-read, no
// getEphemerals or getAllChildrenNumber. A request larger than the
// server's packet limit (jute.maxbuffer, 1 MiB by default) makes the
// server close the connection: it fails with ErrConnectionLoss.
package client
