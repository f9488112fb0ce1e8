// Package zklock provides distributed coordination recipes over ZooKeeper:
// a fair Mutex, a ReentrantMutex, an RWMutex, a counting Semaphore and leader
// Election, all sharing one Session per process.
//
// Every primitive follows the classic ZooKeeper queue: each contender creates
// an ephemeral sequential node under the lock path, the lowest sequence holds,
// and every other contender watches only the node directly ahead of it that
// can block it, so a release wakes one waiter, not all of them. A crashed
// holder's node vanishes with its session.
//
// Nodes carry Apache Curator's names (_c_<uuid>-lock-<seq> and friends), so
// Curator processes can share lock paths with zklock processes.
//
// # Safety
//
// A lock is only as good as the session behind it. The Session computes an
// ownership deadline from the send time of the request behind the last
// server reply, and every acquisition exposes a loss signal that fires at
// that deadline or at session expiry, whichever is first: before the server
// can expire the session and grant the lock to another client. Each
// acquisition also carries a fencing token (the node's creation zxid, which
// increases across acquisitions of a lock even if its parent node is reaped
// and re-created) and a ZooKeeper multi-op check that commits writes only
// while the lock is held.
//
// # Cleanup
//
// Cancellation, timeouts and errors after our node was created delete it
// before the call returns when the server can be reached, and in the
// background until it is gone otherwise. Closing the Session deletes every
// node it created, server-side, at once.
package zklock
