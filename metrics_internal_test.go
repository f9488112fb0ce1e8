package zklock

import (
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// Without Metrics a primitive's line has no Events: acquisitions and
// releases read no clock and report nothing (the engine calls Events only
// when set).
func TestNoEventsWithoutMetrics(t *testing.T) {
	s := &Session{opts: defaultSessionOptions(), done: make(chan struct{})}
	q := &queue.Queue{Dir: "/p", Rules: &queue.Rules{}}
	l, _ := s.line(q, q, mutexSpec, defaultPrimitiveOptions())
	if l.Events != nil {
		t.Fatalf("a line of a session without Metrics has Events %v", l.Events)
	}
	s.metrics = newMetricsState(nopMetrics{})
	t.Cleanup(func() { s.metrics.state(zk.StateClosed); s.metrics.wait() })
	if l, _ := s.line(q, q, mutexSpec, defaultPrimitiveOptions()); l.Events == nil {
		t.Fatal("a line of a session with Metrics has no Events")
	}
}

type nopMetrics struct{}

func (nopMetrics) AcquireWait(Kind, string, time.Duration, error) {}
func (nopMetrics) Hold(Kind, string, time.Duration)               {}
func (nopMetrics) Loss(Kind, string)                              {}
func (nopMetrics) SessionState(zk.State)                          {}
func (nopMetrics) Revoked(Kind, string)                           {}
func (nopMetrics) Expired(Kind, string)                           {}
