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
// An acquisition (Lock, RLock, Acquire, Campaign and their Try forms) that
// fails or whose ctx ends deletes every node it created and returns once
// they are gone from the server: nothing of it is left when it returns. It
// waits for the server at most the cleanup grace, half the session timeout
// but at most 2s, after ctx ends (a Semaphore acquisition, which may have to
// remove its leases and its place in the internal mutex one after the
// other, at most twice that). If the server cannot be reached within the
// grace, the call returns anyway and the delete goes on in the background
// until it succeeds or the session ends, which removes the node too.
// Closing the Session deletes every node it created, server-side, at once.
//
// # License
//
// zklock is licensed under the Apache License 2.0; see the LICENSE file.
package zklock
