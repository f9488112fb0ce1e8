//go:build review

package zklock

import "testing"

// TestReviewFuzzSharedOpen keeps what FuzzSharedHandles found and main does
// not fix yet (make review-open runs it).
//
// Found by a 30-minute run on dda9ba7 at 3m54s: a Semaphore with the
// sequence layout (permits "1of2"), a lease's Release whose ctx ends at its
// first request while its delete's reply is held back: the delete is
// applied and the lease's Lost stays open past the model's 200ms window
// (violation: s2.permits#1 (Acquire(1)) has Lost open, but its node(s)
// [/sp/..-1of2permit-0000000009] are gone). Not triaged: a release cut off
// by its ctx should close Lost at once (release.go), or the model should
// excuse a release in flight whose reply is held.
func TestReviewFuzzSharedOpen(t *testing.T) {
	runShared(t, []byte("\x00\x00\x00@\x01\x02\x03\x04\x05\x06\a\b\t\n\xe9\xff!\x00\x00\x10\x11\x12\x13\x14\x15\x16\x13\x14\x15\x1fz\x17\x18\x19\x1a\x1b\xe9\xff!\x00\x00\x10\x02 $"))
}
