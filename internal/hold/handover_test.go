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

// lostAtGrant is a queue whose first place is lost between its grant and
// its hand-over: the epoch ends right after Take (its nodes go), as it may
// while the grant travels up to the caller.
type lostAtGrant struct {
	*queue.Queue
	c     *queuetest.Conn
	takes int
}

func (p *lostAtGrant) Take(ctx context.Context, r queue.Request) (*queue.Place, error) {
	pl, err := p.Queue.Take(ctx, r)
	if p.takes++; err == nil && p.takes == 1 {
		p.c.EndEpoch()
		p.c.NewEpoch()
	}
	return pl, err
}

// Issue 43, deliver 3: the hold engine hands a hold over only while it is
// live (handOver): every primitive acquires through Line.acquire, so none
// returns a hold whose loss came first. The lost one is given back, and
// the call waits on for a live one (or fails, for a downgrade); the line's
// own loss error (an Election's, a Semaphore's) is not returned for it.
func TestHandOverOnlyLive(t *testing.T) {
	for _, tc := range []struct {
		name string
		errs *Errs
	}{
		{"lock", nil},
		{"election", &Errs{Lost: errors.New("leadership lost"), NotHeld: errs.ErrNotLocked}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(t.Context(), 10*time.Second)
			defer cancel()
			s := queuetest.NewServer()
			c := s.Connect()
			q := &queue.Queue{Conn: c, Dir: "/l", Rules: &queue.Rules{Kind: queue.KindLock, Accept: []string{queue.KindLock}}}
			p := &lostAtGrant{Queue: q, c: c}
			l := &Line{P: p, Q: q, Conf: &Conf{Kind: errs.Mutex, Errs: tc.errs}}
			h, err := l.Acquire(ctx, queue.Request{})
			if err != nil {
				t.Fatalf("Acquire: %v", err)
			}
			if h.IsLost() {
				t.Fatal("Acquire handed over a hold whose Lost is closed")
			}
			if p.takes != 2 {
				t.Fatalf("%d takes, want 2: the lost place given back, then a live one", p.takes)
			}
			if n := s.List("/l"); len(n) != 1 || "/l/"+n[0] != h.Node() {
				t.Fatalf("nodes %v, want only the live hold's %s", n, h.Node())
			}
			if err := l.Release(ctx, h); err != nil {
				t.Fatalf("Release: %v", err)
			}
		})
	}
}
