package zklock

import (
	"context"
	"errors"
	"fmt"

	"github.com/zklock/zklock/internal/queue"
)

// acquirePermits is Acquire and TryAcquire in the one-queue layout
// (WithQueueLayout).
func (s *Semaphore) acquirePermits(ctx context.Context, n int, try bool) (*Lease, error) {
	start := s.s.now()
	pm, err := s.p.Acquire(ctx, queue.PermitRequest{N: n, Data: s.data, Try: try})
	var le *queue.LimitError
	switch {
	case errors.Is(err, queue.ErrFull):
		err = ErrNotAcquired
	case errors.As(err, &le):
		err = fmt.Errorf("%w: %s holds a permit of a semaphore of %d, this Semaphore has %d",
			ErrLimitMismatch, s.path, le.Found, s.limit)
	}
	err = mapQueueErr(err)
	var h *queue.Held
	if err == nil {
		h = pm.Held
	}
	s.s.acquired(KindSemaphore, s.path, start, h, err)
	if err != nil {
		return nil, err
	}
	return &Lease{sem: s, held: []*queue.Held{h}, permit: pm}, nil
}

// listPermits splits the permit nodes into those whose leases fit within
// the limit, counted in queue order, and those behind them.
func (s *Semaphore) listPermits(ctx context.Context) (holders, waiters []Contender, err error) {
	all, err := listContenders(ctx, &queue.Queue{Conn: s.l.Conn, Dir: s.path, Accept: []string{queue.KindPermit}})
	if err != nil {
		return nil, nil, err
	}
	used := 0
	for i, c := range all {
		n, _, ok := queue.PermitWeight(c.Path[len(s.path)+1:])
		if !ok {
			continue
		}
		if used += n; used > s.limit {
			return holders, all[i:], nil
		}
		holders = append(holders, c)
	}
	return holders, nil, nil
}
