package hold

import (
	"context"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/queue/queuetest"
)

// A revocation request written after the holder's watcher read its node and
// before the watch was set is seen, not missed (it was missed while the
// watcher waited with WaitChange, which waits for the next write: the
// Prometheus adapter's TestRecipeEvents hung on a loaded machine).
func TestRevocationBetweenReadAndWatch(t *testing.T) {
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	s := queuetest.NewServer()
	c := s.Connect()
	if err := c.CreateContainer(ctx, "/l"); err != nil {
		t.Fatal(err)
	}
	node, _, _, err := c.CreateSeq(ctx, "/l/_c_x-lock-", nil)
	if err != nil {
		t.Fatal(err)
	}
	c.Inject(queuetest.OpWatch, queuetest.Fault{Before: func() {
		if err := s.SetData(node, []byte(queue.RevokeMessage)); err != nil {
			t.Error(err)
		}
	}})
	revoked, heard, done := make(chan struct{}), make(chan struct{}, 4), make(chan struct{})
	go func() {
		defer close(done)
		watchRevocation(ctx, c, node, revoked, func() { heard <- struct{}{} })
	}()
	select {
	case <-heard:
	case <-ctx.Done():
		t.Fatalf("a request written before the watch was set was missed (ctx: %v)", ctx.Err())
	}
	select {
	case <-revoked:
	default:
		t.Fatal("watchRevocation reported the request but did not close revoked")
	}
	cancel()
	<-done
}
