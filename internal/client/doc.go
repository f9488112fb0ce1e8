// Package client is zklock's ZooKeeper client, written from ZooKeeper's
// protocol definition (the jute records of zookeeper.jute, the opcodes of
// ZooDefs and the error codes of KeeperException, release 3.8).
//
// A Client is one session. Dial connects to one of the servers and
// establishes the session; when the connection is lost the client
// reconnects and resumes the session with its id, password and last zxid,
// until the server says the session has expired; then it starts a new
// one. A resume answered with another session id is taken as that: the
// old session is reported expired (StateExpired, its watches end, its
// queued requests fail with ErrSessionExpired, nothing of it is restored)
// and the client goes on in the new one. Config.OnState is told of each
// step.
//
// Reconnects are paced: after a connection that proved useful, the next
// attempt waits a random part of 50ms, then every server is tried in
// turn, and after each round in which none served the client waits a
// random delay, doubling from 50ms up to Config.MaxReconnectDelay. A
// connection proved useful when it carried a reply beyond the connect
// response and lived at least Config.MaxReconnectDelay (1s by default);
// any other is a failed attempt, so a server that accepts the session and
// drops it, at once or after its first reply, or that grants a session
// timeout too short to keep a connection, is reconnected to no more often
// than about once per Config.MaxReconnectDelay.
//
// # A session no server resumes
//
// A server behind the client's last zxid refuses to resume the session
// (it closes the connection: "client has seen zxid ..., client must try
// another server"), and may be the only server left. ZooKeeper's Java
// client (3.8) never gives a session up by itself: it goes on trying the
// servers, each attempt after a random 0-1s pause, and reports Expired
// only when a server says so; an application that wants a new session
// closes the handle and makes another (Curator 5.4 does: it injects an
// expiry once the session timeout has passed while suspended). zklock
// differs: when no server has resumed the session for longer than twice
// its timeout since its last connection ended (a resume answered later is
// not taken: the client sends that server closeSession and leaves), the
// client expires it locally,
// as if a server had refused it (StateExpired with ErrExpiredLocally,
// queued requests fail with ErrSessionExpired, every watch ends), forgets
// its last zxid, and starts a new session on whichever server takes it.
// Every server that has been counting has expired the session by then: it
// heard nothing from the client since that connection ended, and a server
// expires a session at the first tick boundary after its timeout, a tick
// being at most half the timeout unless the server's minSessionTimeout is
// set below its default of two ticks (then a server may hold the session
// past the client's limit). (An ensemble
// without a quorum throughout expires it only once it has one again: the
// old session's ephemeral nodes live on until then.) The session layer
// above has ended the holds of the session earlier, at its deadline.
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
// ErrConnectionLoss: the server may or may not have performed it (or with
// ErrAuthFailed, when the server refused a credential on that connection:
// the client closes then, see StateAuthFailed). Requests
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
// connection, after the credentials and before any queued request. The
// last zxid is that of the last reply to an ordinary request: the server
// answers one only after every packet sent before it, so every event up
// to its zxid has been read. A setWatches reply (or a ping's) carries the
// server's newest zxid too but does not move it: a restore split over
// several packets and cut between them is restored again whole with the
// zxid it started from, and no change in between goes unfired. When the
// session expires or the client closes, every watch ends with an
// EventNotWatching.
//
// # What the client takes from the server
//
// Nothing from the peer is trusted: a frame (a length and a body) must
// arrive whole within the read timeout (two thirds of the session
// timeout) of the moment the client began to wait for it, or the
// connection is left, however slowly its bytes trickle; a frame longer
// than Config.MaxPacket (jute.maxbuffer, 1,048,575 bytes by default, the
// limit of ZooKeeper's Java client too) plus 1 KiB breaks the connection
// before anything is allocated for it; decoding a body allocates at most
// 4 bytes for each of its bytes (a vector's count is refused if its
// elements could not fit in what is left of the body), beside a multi's
// results, one per op sent; a reply that
// answers no request in flight, is cut short, or, for a multi, carries
// other than one result per op, or error results none of which names an
// op that failed (all "rolled back"), breaks the connection, and the
// requests in flight fail with ErrConnectionLoss.
//
// # Limits
//
// No chroot, no read-only mode, no SASL, no reconfig, no multi-read, no
// getEphemerals or getAllChildrenNumber. A request larger than the
// server's packet limit (jute.maxbuffer, 1 MiB by default) makes the
// server close the connection: it fails with ErrConnectionLoss. So does a
// reply longer than Config.MaxPacket plus 1 KiB: a listing of a node with
// too many children (about 17,000 of zklock's names at the default) fails
// on every connection, as in the Java client.
package client
