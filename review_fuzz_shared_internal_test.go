package zklock

import "testing"

// TestReviewFuzzShared runs FuzzSharedHandles' inputs that found engine
// bugs through its scheduler's chain steps, each fixed since (it failed
// first, printing the model's violation and the steps).
func TestReviewFuzzShared(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		// New: s0's owner's first Lock (lane 0) is inside its first
		// request's exchange when lane 1's TryLock runs and succeeds (its
		// node first); the first Lock then enqueues a second node of the
		// owner, behind its own: two nodes in /re, the Lock waits for the
		// owner (finding 3's deadlock, by a TryLock that succeeds).
		{"ReentrantTryLockWinsBesideFirstLock", seed(0, 0, 0, schedBit, st(chainOp|4, 5, 0x04))},
	} {
		t.Run(tc.name, func(t *testing.T) { runShared(t, tc.in) })
	}
}
