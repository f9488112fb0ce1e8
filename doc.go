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
// Curator processes can share lock paths with zklock processes; the README's
// page docs/interop.md gives each primitive's layout and which peers may
// share its path.
//
// # Safety
//
// A lock is only as good as the session behind it. The Session computes an
// ownership deadline from the send time of the request behind the last
// server reply, and every acquisition exposes a loss signal that fires at
// that deadline or at session expiry, whichever is first: before the server
// can expire the session and grant the lock to another client. Each
// acquisition also carries a fencing token (made from the node's creation
// zxid, it increases across acquisitions of a lock even if its parent node
// is reaped and re-created; see Mutex.Token) and a guard (Mutex.Guard), a
// ZooKeeper check that, put first in a Multi of package zk (the Session's
// ZooKeeper client, Session.Client), commits writes only while the lock is
// held.
//
// # Handoff
//
// An exclusive holder (Mutex, ReentrantMutex, an RWMutex writer) that had
// to wait releases with one multi that sets its node's data and deletes it,
// and its node's data is tagged to say so. The waiter behind it sees the data change,
// which a plain deletion never causes, and holds at once: a busy lock
// passes from one holder to the next in one write and one notification,
// without the listing of the queue that Curator, Kazoo and go-zookeeper's
// zk.Lock send on every handoff and whose size grows with the queue. A
// waiter also holds without a listing when the only contender ahead of it
// that could block it goes, however it goes. Anything else (a waiter ahead
// giving up, a session expiring, a data change on an untagged node such as
// a Curator holder's, a reconnect after which a watch may not have been
// restored) makes the waiter list the queue again. The proof rests on one
// premise: nothing but a release writes the data of a tagged node. Where
// something might, such as Curator's Revoker aimed at zklock nodes or
// writes through Session.Client, give every zklock handle on the path
// WithListingHandoff. The tag itself cannot come from a caller: WithData
// and Election.Campaign refuse data holding a NUL byte followed by
// "zklock:", which begins every tag.
//
// # Handles and goroutines
//
// A Mutex, RWMutex or ReentrantMutex behaves like its sync counterpart
// across goroutines: shared by several, a Lock waits while it is held and
// the goroutines are granted in the order their calls reached the session,
// each acquisition with its own fencing token (a ReentrantMutex is one
// owner: its Lock while it holds counts). Cohorting (WithCohort) is the
// same local queue, with one node kept across local grants.
//
// # Combining features
//
// Options and recipes combine (a bounded hold that downgrades, a cohort's
// node broken by an operator, a MultiLock whose part's session expires),
// and a call returns a hold only while every hold it relies on is live,
// each checked against its own loss signal. Pairs that cannot be made safe
// are refused by the constructor with ErrInvalidArgument. The README's
// recipes page (docs/recipes.md, "What happens when…") says what each
// pair does, with the test that proves it.
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
