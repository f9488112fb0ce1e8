package zklock

import (
	"errors"
	"testing"

	"github.com/zklock/zklock/internal/queue"
)

// Without Metrics, the calls every acquisition and release makes cost no
// allocation.
func TestMetricsHooksAllocateNothingWhenUnset(t *testing.T) {
	s := &Session{opts: defaultSessionOptions()}
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
