//go:build review

package zklock

import "testing"

// TestReviewFuzzShared runs FuzzSharedHandles' inputs that fail on a1f70de
// (issue 43's fixes in), found by its scheduler's chain steps: kept behind
// the review tag, like the review's open findings, until the engine is
// fixed. Each prints the model's violation and the steps.
func TestReviewFuzzShared(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
	}{
		// A Mutex holder (s0) with s1's queued; lane 1 Unlocks, its ctx
		// ends inside its delete's exchange (applied, no reply): Unlock
		// returns the ctx's error, the handle holds with Lost open, the
		// node is gone, and s1 holds. (The review's UnlockCtxEndsAfterDelete.)
		{"MutexUnlockCtxEndsAfterDelete", seed(0, 0, 0, schedBit, st(0, 0, 0), st(0, perSession, 0), st(chainOp|8, 1, 0x06))},
		// The same on a ReentrantMutex: its count stays 1; a later Lock
		// re-enters and returns nil while s1 holds.
		{"ReentrantReentryAfterUnlockCtxEnds", seed(0, 0, 0, schedBit, st(0, 5, 0), st(0, perSession+5, 0), st(chainOp|8, 6, 0x06), st(0, 7, 0))},
		// s0's owner holds /re; s1 Breaks it (force); s1's owner Locks
		// and holds; s0's owner re-enters: nil. (The review's
		// ReentrantReentryAfterBreak.)
		{"ReentrantReentryAfterBreak", seed(0, 0, 0, 0, st(0, 5, 0), st(10, 1, 7), st(0, perSession+5, 0), st(0, 6, 0))},
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
