package hold

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// gatedGive is a queue whose Give waits for gate, then gives the place
// back; it gives up when its ctx ends first.
type gatedGive struct {
	*queue.Queue
	entered chan struct{}
	gate    chan struct{}
}

func (g gatedGive) Give(ctx context.Context, p *queue.Place) error {
	close(g.entered)
	select {
	case <-g.gate:
	case <-ctx.Done():
		return ctx.Err()
	}
	return g.Queue.Give(ctx, p)
}

// A Release that comes while the bound is giving the place back must not
// cut that give-back short: the node would stay, and the next in line wait
// behind it until the session ends. (Found by TestMaxHoldBesideDowngradeZK
// under -race: the test's Unlock came right after the bound's loss signal,
// and writer B waited 60s behind A's write node.) Here the give-back is
// held until the Release has returned.
func TestReleaseLetsBoundGiveBack(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
	defer cancel()
	fire := make(chan time.Time, 1)
	old := BoundTimer
	BoundTimer = func(time.Duration) (<-chan time.Time, func() bool) { return fire, func() bool { return true } }
	t.Cleanup(func() { BoundTimer = old })

	s := queuetest.NewServer()
	c := s.Connect()
	q := &queue.Queue{Conn: c, Dir: "/l", Rules: &queue.Rules{Kind: queue.KindLock, Accept: []string{queue.KindLock}}}
	g := gatedGive{Queue: q, entered: make(chan struct{}), gate: make(chan struct{})}
	l := &Line{P: g, Q: q, Conf: &Conf{Kind: errs.Mutex, Layers: Layers{MaxHold: time.Hour}}}
	h, err := l.Acquire(ctx, queue.Request{})
	if err != nil {
		t.Fatal(err)
	}
	node := h.Node()
	fire <- time.Now()
	<-h.Lost()
	<-g.entered // the bound is giving the place back

	rctx, rcancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer rcancel()
	if err := l.Release(rctx, h); !errors.Is(err, errs.ErrLockLost) {
		t.Fatalf("Release of a hold past its bound = %v, want ErrLockLost", err)
	}
	close(g.gate)
	if err := s.Await(ctx, func() bool { return !s.Exists(node) }); err != nil {
		t.Fatalf("the bound's give-back was cut short by the Release: %s still exists (%v)", node, err)
	}
}
