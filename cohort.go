package zklock

import (
	"time"

	"github.com/zklock/zklock/internal/hold"
)

// Cohorting (WithCohort): the Mutex handles of one Session on one path
// share one node in the queue. While the process holds that node, a
// releasing holder hands the lock to the next local waiter in memory, with
// no request to the server, until the cohort's bound is reached; then the
// node is released so that other processes get their turn, and the local
// waiters left enqueue again, behind them. (Dice, Marathe and Shavit, "Lock
// Cohorting", PPoPP 2012, for NUMA nodes.)

// Default cohort bounds (see WithCohort).
const (
	defaultCohortHandoffs = 32
	defaultCohortHold     = 100 * time.Millisecond
)

// WithCohort makes a Mutex (or ReentrantMutex) one of a cohort: every
// handle of one Session on one path created with WithCohort shares one
// node in the queue. A release hands the lock to the next waiting handle of
// the cohort in memory, in FIFO order, without a server round trip, as long
// as the cohort has held its node for fewer than maxHandoffs local grants
// and for less than maxHold; past either bound the node is released, the
// next process in the queue holds, and the cohort's remaining waiters
// enqueue again behind it.
//
// Fairness: a contender of another process (or another Session) queued
// behind the cohort's node holds after at most maxHandoffs local holds, or
// after maxHold plus the one local hold in progress when maxHold passed,
// whichever comes first. Within the cohort, handles are granted in the
// order they called Lock.
//
// Every guarantee holds per local holder: Lost fires for each when the
// shared node's ownership ends; Token strictly increases over local
// handoffs (see Mutex.Token), so a resource that accepts only increasing
// tokens rejects a stale local holder; and Guard, once a holder took it,
// is invalidated before the next local holder is granted (the cohort bumps
// the node's data version, one write, only when the previous holder took a
// Guard).
//
// A local handoff relies on the shared node, so the cohort hands it on
// only while it knows the node stands: its session's ownership has not
// ended, and, while a local waiter queues behind a local holder, a watch
// on the node (one read per node, plus one after each guard bump; none on
// the uncontended path) has not seen it deleted. A node deleted by another
// client (Break) is dropped: its holder's Unlock returns ErrLockLost, and
// the local waiters enqueue again behind whoever holds now. The holder's
// own Lost does not fire for that deletion (as for any broken holder).
//
// WithCohort applies to Mutex and ReentrantMutex; NewRWMutex, NewSemaphore
// and NewElection refuse it, and so does combining it with WithRevocable
// or WithMaxHold, with ErrInvalidArgument: one request or one bound could
// not address the several holders a node is shared by.
//
// maxHandoffs must be from 1 to 4095; 0 means the default, 32.
// maxHold must not be negative; 0 means the default, 100ms. Handles of one
// cohort share the bounds and node data of the handle whose Lock formed it.
// Without WithCohort (the default) every handle has its own node.
func WithCohort(maxHandoffs int, maxHold time.Duration) Option {
	return func(o *primitiveOptions) error {
		if maxHandoffs < 0 || maxHandoffs > hold.MaxLocalGrants || maxHold < 0 {
			return invalid("cohort bound (%d handoffs, %v) out of range", maxHandoffs, maxHold)
		}
		if maxHandoffs == 0 {
			maxHandoffs = defaultCohortHandoffs
		}
		if maxHold == 0 {
			maxHold = defaultCohortHold
		}
		o.cohort = &hold.Bound{Handoffs: maxHandoffs, Hold: maxHold}
		return nil
	}
}
