package zklock

import (
	"errors"
	"testing"

	"github.com/zklock/zklock/internal/queue"
)

// Without Metrics, the calls every acquisition and release makes cost no
// allocation.
func TestMetricsHooksAllocateNothingWhenUnset(t *testing.T) {
	s := newSession(defaultSessionOptions())
	defer s.stopBg()
	h := &queue.Held{}
	err := errors.New("x")
	allocs := testing.AllocsPerRun(100, func() {
		start := s.now()
		s.acquired(KindMutex, "/p", start, h, nil)
		s.acquired(KindMutex, "/p", start, nil, err)
		s.released(h)
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per acquisition without Metrics", allocs)
	}
	if !s.now().IsZero() {
		t.Fatal("the clock was read without Metrics")
	}
}

func TestPrimitivePath(t *testing.T) {
	for node, want := range map[string]string{
		"/a/lock/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-lock-0000000001":        "/a/lock",
		"/a/sem/leases/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-lease-0000000003": "/a/sem",
		"/a/rw/_c_0f1e2d3c-aaaa-bbbb-cccc-000000000000-__READ__0000000002":       "/a/rw",
	} {
		if got := primitivePath(node); got != want {
			t.Errorf("primitivePath(%s) = %s, want %s", node, got, want)
		}
	}
}
