package zklock

import "time"

// WithMaxHold bounds how long a Mutex, ReentrantMutex or RWMutex holds:
// d after it was granted, its loss signal fires and its node is released,
// even while its session is healthy, so that a live but hung holder cannot
// keep the lock longer. Use it where a stuck holder costs more than a
// broken lock. Like every loss, it fires before the node is deleted, so
// before anyone else can hold: stop using the resource when Lost fires,
// and fence writes with Token or Guard (the expired holder's Guard fails
// once its node is gone; the next holder's Token is larger). Unlock after
// it returns ErrLockLost. The default is no bound; d must be positive.
//
// The hold's Lost is a channel of its own, closed at the bound, or at the
// session's ownership deadline by a goroutine that wakes then (within the
// deadline's safety margin, before a rival can hold); asked after that
// deadline, Lost returns a closed channel at once. A hold whose Unlock was
// cut off by its ctx is over (see Mutex.Unlock), and its bound stops with
// it. An RWMutex read lock taken by downgrading ends at its write lock's
// bound at the latest, and a write node released at its bound
// beside such a read lock does not announce its release (the read lock
// still blocks the writers behind). A downgrade after the bound passed
// fails with ErrLockLost. A MultiLock part whose bound passes before the
// MultiLock holds every part makes it start over (see MultiLock.Lock).
//
// The bound is kept by the holder's own process, which is what a hung
// holder still runs (a holder whose whole process froze loses its session
// instead). ZooKeeper's TTL nodes would not do better: they are never
// ephemeral, so a crashed holder's node would outlive its session until
// the TTL, the server reaps them only on its container sweep, and they
// need the server option zookeeper.extendedTypesEnabled.
func WithMaxHold(d time.Duration) Option {
	return func(o *primitiveOptions) error {
		if d <= 0 {
			return invalid("max hold %v is not positive", d)
		}
		o.maxHold = d
		return nil
	}
}
