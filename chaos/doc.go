// Package chaos is zklock's chaos suite: it backs the claims "mutual
// exclusion is never violated" and "a holder learns it may have lost its
// lock before a rival can acquire it" with real faults, and prints figures.
//
// Run starts a 3-server ZooKeeper ensemble (package zktest) and several
// worker processes: the test binary re-executed with EnvProc set, which its
// TestMain hands to MainWorker. Each worker has one Session, through its own
// zktest.Proxy, and runs a workload per primitive (Mutex, ReentrantMutex,
// RWMutex, Semaphore with a limit in Curator's layout and one more in the
// queue layout, whose holds take one or two leases, Election, a cohort of
// Mutexes): acquire, then one to three
// read-modify-write increments of a counter node, each a zk.Client.Multi with
// the hold's Guard, the counter write and a sequential receipt node, then
// release. Every event goes to the worker's JSON-lines log stamped with
// CLOCK_MONOTONIC (Now), which all processes share: when an acquisition
// returned, each write with its outcome, and when the holder stopped
// believing it held (its release, or the moment it saw the loss signal).
// At each acquire and before each write a zklock worker also logs its
// Session.OwnershipDeadline on that clock (Event.Dl), while the hold's loss
// signal has not fired: the promise the checker holds it to. A hold whose
// step fails (a read that failed, a write of unknown outcome) tries again
// until its steps are done or it sees its loss signal, so that a holder cut
// off from the servers holds on until it is told, as a user who works until
// told would.
//
// With Config.Postgres (the default of TestChaos, make chaos and make
// soak), the run also starts a PostgreSQL server (fence/pgtest) and every
// exclusive hold of a zklock worker (an RWMutex's writer, not a reader or
// a semaphore's lease) writes it at each step too, through the fence
// (fence.Fence.Do with the hold's token, resource: the primitive's name):
// a read-modify-write of a per-primitive counter row with no lock of its
// own, and a log row with the value and the token, in one transaction.
// The values give the commit order of a resource's writes; the checker
// requires them to run 1, 2, 3... and the tokens in that order never to go
// down (checkPostgres), and reports the writes the fence refused.
//
// Meanwhile a seeded schedule injects one fault at a time, each kind once
// per shuffled round (FaultKinds): leader kill and restart, follower kill
// and restart, whole-ensemble restart, a client blackholed past its session
// timeout then healed, a client's connections reset, added latency, a
// client process frozen with SIGSTOP past its session timeout then resumed,
// a client process killed with SIGKILL and started again, and four faults
// between the servers, whose quorum and election traffic runs through
// zktest's peer network: the leader isolated from both followers, a
// follower isolated (a 1|2 split), one direction between the leader and a
// follower cut, and latency between the leader and its followers, each for
// one to six seconds. Client faults aim, two times in three, at the process
// holding a lock.
//
// The writes of the exclusive primitives carry no version check: only the
// lock protects the read-modify-write, so two holders show up as a write
// that sets the counter back. Receipts, committed in the same multi as the
// counter, settle writes whose reply was lost, and their czxids give the
// commit order across primitives. Check then fails the run on (docs/chaos.md
// gives each rule with its bounds):
//
//   - a rival granted before the ownership deadline a zklock holder had
//     logged, frozen or not, while the holder believed or after its hold
//     ended otherwise than by its release (checkDeadlines);
//   - two believed holds overlapping where the primitive forbids it (any two
//     for a mutex, reentrant mutex or election, a writer beside anyone for
//     the RWMutex, more leases than the limit for a semaphore), unless the
//     earlier zklock holder was frozen, the rival coming no sooner than
//     RivalAfterFreeze after the freeze began and the belief ending within
//     MaxBeliefAfterResume of the resume; or the later one is a grant that
//     went stale while its process was frozen acquiring it, whose loss
//     signal fired (within the same bounds); or the earlier one is a peer's
//     whose node the coordinator saw deleted before the rival acquired.
//     Frozen and stale holds are reported apart (PausedOverlap), and any of
//     their writes that committed after the rival acquired, by commit order,
//     is a fencing failure;
//   - a zklock write that committed, by commit order, after a conflicting
//     hold began that began after the writer stopped believing, whoever
//     held it (checkLateCommits);
//   - a lost or duplicated increment: a committed increment that does not
//     write the value before it (in commit order) plus one, unless one of
//     the two writes is a peer's unfenced write after its node was gone or
//     after a later hold began; a final counter that differs from the number
//     of receipts; an acknowledged write without a receipt, a refused write
//     with one;
//   - a stale write accepted: an exclusive primitive's receipts out of token
//     order, or a write committed after its holder saw the loss signal;
//   - an acquire logged again with no release between, or a zklock hold
//     with no release in a process that was not killed;
//   - an ephemeral node left under the lock paths once every worker exited
//     and the sessions of killed ones had time to expire;
//   - a primitive with no holder while contenders waited and no fault was
//     active, for longer than the session timeout plus LivenessSlack;
//   - a fault that failed (its record carries the error);
//   - a worker that exited on its own (a worker that cannot write its log
//     stops with the error), would not stop when told to, or printed a panic
//     or a data race (anywhere: a zklock worker runs only zklock's code,
//     its ZooKeeper client included).
//
// Peer workers join the zklock workers and write through the same counters,
// with the same log format plus their connection states (EvConn): Curator
// workers (Config.Curator; java/CuratorWorker.java on a JVM against
// Debian's Curator) on the mutex, RWMutex and semaphore paths
// (InterProcessMutex, InterProcessReadWriteLock, InterProcessSemaphoreV2),
// and Kazoo workers (Config.Kazoo; python/kazoo_worker.py, Debian's
// python3-kazoo) on the reentrant path (Kazoo's Lock beside zklock's
// ReentrantMutex; Kazoo's read-write lock and semaphore do not share
// zklock's layouts, and Curator's lock does not see Kazoo's nodes, so the
// two never share a path). They do what a plain user of
// those libraries does: hold until they release, whatever the connection
// says, and write without a token (their locks have none). They log their
// hold's node at each acquire, and the coordinator watches the directories
// those nodes are in (nodeWatcher), recording when each was deleted. Check
// holds them to the same invariants, and lays at their door only what
// those libraries are known to get wrong, with the evidence: a holder that
// still believed it held after its node was gone (its session expired),
// a lease returned whose node was gone already, and the increments their
// unfenced writes lost (PeerOverlap, Report.PeerLost). Any other overlap
// with a peer holder is a violation. The ownership deadline is zklock's
// promise; their libraries make none, so their node is what judges them.
//
// Every worker samples its live heap and goroutines, and the coordinator the
// servers' nodes and watches, every SampleEvery; the report gives them per
// source, and growth over a source's life of GrowthSpan or more is a
// violation. Config.Keep spares workers from kills so that, in a long run
// (make soak), they live long enough to be judged.
//
// The Report gives faults by kind with the median and maximum recovery
// time (from the fault being undone to every primitive acquired afresh;
// a recovery the next fault interrupted is counted apart),
// acquisitions and increments per primitive, write outcomes, how far each
// running holder's loss signal came before the next conflicting
// acquisition, the paused overlaps and whether fencing caught each, and the
// violations. Run saves what it checked in OutcomeFile, in the run's log
// directory; go run ./recheck FILE (in chaos/, a module of its own) checks it again.
//
// The seed fixes the schedule's draws (kinds, durations, latencies); the
// victims of client faults depend on who holds at that moment, so a replay
// hits the same kinds at the same times but not always the same processes.
//
// To show that the checker can fail, EnvBroken (CHAOS_BROKEN for the test,
// per worker: see BrokenFor) breaks the workload: "noguard" drops the
// guard, "ignorelost" ignores the loss signal, "latelost" acts on it a
// session timeout late, "latedeadline" logs a deadline as late, "nofence"
// writes PostgreSQL without the fence.
// TestChaosBrokenIsCaught runs three broken workers beside a correct one,
// cuts each off in turn, and fails unless each causes its own class of
// violation, by name (the first, which also skips the fence, a stale write
// committed to PostgreSQL too); it stops after those three faults (make test runs
// it; make chaos-broken too, bounded by BROKEN_DURATION). The checker's unit tests also run it on
// synthetic histories (testdata/golden), each a failure an earlier checker
// passed.
package chaos
