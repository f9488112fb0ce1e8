package zklock

// fuzzSeeds are FuzzHolds' hand-written seeds (testdata/fuzz/FuzzHolds
// holds the inputs the fuzzer found): the scenarios of issue 34's findings
// 1-4, then a walk over each primitive with faults. A handle is target
// session*8 + kind (0, 1 Mutex /m, 2 ReentrantMutex, 3 RWMutex, 4 Curator
// layout semaphore, 5 permit layout, 6 Election, 7 MultiLock); a session
// is target%3; see FuzzHolds for the operations.
var fuzzSeeds = [][]byte{
	// 1: s1's RWMutex (max hold) is granted after s0's, s2's writer
	// queues, s1 downgrades, its write lock's bound passes.
	seed(0, 0x40, 0, 0, st(0, 3, 0), st(0, 11, 0), st(2, 3, 0), st(0, 19, 0), st(5, 11, 0), st(8, 0, 0)),
	// 2: s0's writer (max hold) with s1's queued: the bound passes, then
	// s0 downgrades.
	seed(0x40, 0, 0, 0, st(0, 3, 0), st(0, 11, 0), st(8, 0, 0), st(5, 3, 0), st(6, 3, 0)),
	// 3: s0's MultiLock holds /ml/a and waits for /rw (s1's); s0 expires;
	// s2's MultiLock takes /ml/a; s1 releases /rw.
	seed(0, 0, 0, 0, st(0, 11, 0), st(0, 7, 0), st(11, 0, 0), st(0, 23, 0), st(2, 11, 0)),
	// 3, as FuzzHolds found it on 08d9e43 (before the fix): s0's
	// RWMutex holds /rw, s0's MultiLock takes /ml/a and queues on /rw
	// behind it, s0's epoch ends (both its nodes go).
	seed(0, 0, 0, 0, st(0, 3, 0), st(0, 7, 0), st(12, 0, 0)),
	// 4: s0's two cohort Mutexes, one holding, one waiting locally, and
	// s1's Mutex queued; s1 breaks /m (force) and its Mutex gets in; s0's
	// holder unlocks.
	seed(0x0f, 0, 0, 0, st(0, 0, 0), st(0, 1, 0), st(0, 8, 0), st(10, 1, 5), st(2, 0, 0)),
	// Semaphores: multi-lease requests, a waiter, an expiry, releases.
	seed(0, 0, 0, 0, st(0, 4, 1), st(0, 12, 0), st(0, 20, 0), st(0, 5, 1), st(0, 13, 0), st(11, 2, 0),
		st(2, 4, 0), st(1, 21, 1), st(0, 29, 0), st(2, 13, 0)),
	// Election: two candidates, an epoch's end, a resignation.
	seed(0, 0, 0, 0, st(0, 6, 0), st(0, 14, 0), st(12, 0, 0), st(0, 22, 0), st(2, 14, 0), st(2, 6, 0)),
	// Faults: a create's reply lost, a delete lost, a cancel at a listing,
	// a revocable reentrant lock revoked and released.
	seed(0x20, 0x20, 0, 0, st(13, 0, 0), st(0, 0, 0), st(14, 0, 3), st(2, 0, 0), st(15, 9, 1),
		st(0, 2, 0), st(0, 2, 0), st(0, 10, 0), st(9, 1, 1), st(2, 2, 0), st(2, 2, 0)),
	// RWMutex readers and writers with revocation, a Break without force,
	// the max hold of a MultiLock's part.
	seed(0x80, 0x80, 0, 0x01, st(3, 3, 0), st(3, 11, 0), st(0, 19, 0), st(9, 0, 2), st(6, 3, 0), st(10, 2, 2),
		st(6, 11, 0), st(0, 7, 0), st(8, 0, 0), st(0, 15, 0), st(2, 19, 0)),
}

// st is one step: an operation, its target and its argument.
func st(op, target, arg byte) [3]byte { return [3]byte{op, target, arg} }

// seed is an input: the options of the three sessions' handles and of the
// MultiLocks, then the steps.
func seed(o0, o1, o2, o3 byte, steps ...[3]byte) []byte {
	out := []byte{o0, o1, o2, o3}
	for _, s := range steps {
		out = append(out, s[:]...)
	}
	return out
}
