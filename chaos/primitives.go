package chaos

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Primitives names the workloads, one per zklock primitive; "semqueue",
// a Semaphore in the one-queue layout (WithPermitLayout); and "cohort":
// CohortSize goroutines of each process on one Mutex path, all with
// WithCohort, so that local handoffs mix with remote ones.
var Primitives = []string{"mutex", "reentrant", "rwmutex", "semaphore", "semqueue", "election", "cohort"}

// counting reports whether prim's holders may overlap up to the limit: a
// semaphore's, in either layout.
func counting(prim string) bool { return prim == "semaphore" || prim == "semqueue" }

// limitOf is a counting primitive's limit in a run whose semaphore limit
// is limit: the queue layout's is one more, and its holds take one or two
// leases, so that it runs with three holders and out-of-order releases
// among them, and with requests of several leases.
func limitOf(prim string, limit int) int {
	if prim == "semqueue" {
		return limit + 1
	}
	return limit
}

// CohortSize is how many workloads each process runs on the cohort path.
const CohortSize = 3

// Modes of a hold.
const (
	ModeExclusive = "w" // mutex, reentrant, election, or an RWMutex writer
	ModeRead      = "r" // an RWMutex reader
	ModeLease     = "l" // a semaphore lease
)

// hold is one acquisition, whatever the primitive.
type hold struct {
	mode    string
	n       int // leases of a semaphore hold
	token   int64
	guard   []zk.Op
	lost    <-chan struct{}
	release func(context.Context) error
}

// acquirer blocks until it holds, ctx ends, or the session is closed.
type acquirer func(ctx context.Context, rnd *rand.Rand) (*hold, error)

// newAcquirer returns prim's acquisition over s at path; limit is the
// semaphore's.
func newAcquirer(s *zklock.Session, prim, path string, limit int) (acquirer, error) {
	switch prim {
	case "mutex":
		m, err := zklock.NewMutex(s, path)
		return func(ctx context.Context, _ *rand.Rand) (*hold, error) {
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			return &hold{ModeExclusive, 0, m.Token(), []zk.Op{m.Guard()}, m.Lost(), m.Unlock}, nil
		}, err
	case "cohort":
		m, err := zklock.NewMutex(s, path, zklock.WithCohort(4, 50*time.Millisecond))
		return func(ctx context.Context, _ *rand.Rand) (*hold, error) {
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			return &hold{ModeExclusive, 0, m.Token(), []zk.Op{m.Guard()}, m.Lost(), m.Unlock}, nil
		}, err
	case "reentrant":
		r, err := zklock.NewReentrantMutex(s, path)
		return reentrantAcquirer(r), err
	case "rwmutex":
		m, err := zklock.NewRWMutex(s, path)
		return rwAcquirer(m), err
	case "semaphore", "semqueue":
		var opts []zklock.Option
		if prim == "semqueue" {
			opts = append(opts, zklock.WithPermitLayout())
		}
		sem, err := zklock.NewSemaphore(s, path, limitOf(prim, limit), opts...)
		return func(ctx context.Context, rnd *rand.Rand) (*hold, error) {
			n := 1
			if prim == "semqueue" {
				n += rnd.IntN(2)
			}
			l, err := sem.Acquire(ctx, n)
			if err != nil {
				return nil, err
			}
			return &hold{ModeLease, n, l.Token(), l.Guard(), l.Lost(), l.Release}, nil
		}, err
	case "election":
		e, err := zklock.NewElection(s, path)
		return func(ctx context.Context, _ *rand.Rand) (*hold, error) {
			t, err := e.Campaign(ctx, nil)
			if err != nil {
				return nil, err
			}
			return &hold{ModeExclusive, 0, t.Token(), []zk.Op{t.Guard()}, t.Lost(), e.Resign}, nil
		}, err
	}
	return nil, fmt.Errorf("chaos: unknown primitive %q", prim)
}

// reentrantAcquirer locks twice, the second time nested (no server call),
// and unlocks as many times.
func reentrantAcquirer(r *zklock.ReentrantMutex) acquirer {
	return func(ctx context.Context, _ *rand.Rand) (*hold, error) {
		if err := r.Lock(ctx); err != nil {
			return nil, err
		}
		if err := r.Lock(ctx); err != nil {
			_ = r.Unlock(ctx)
			return nil, fmt.Errorf("nested Lock: %w", err)
		}
		release := func(ctx context.Context) error {
			// Unlock until the owner holds nothing (ErrNotLocked), at most
			// three times: two Locks to match, and one retry of a cut-off.
			var err error
			for i := 0; i < 3; i++ {
				e := r.Unlock(ctx)
				if errors.Is(e, zklock.ErrNotLocked) || errors.Is(e, zklock.ErrNotOwner) {
					return err
				}
				err = e
			}
			return err
		}
		return &hold{ModeExclusive, 0, r.Token(), []zk.Op{r.Guard()}, r.Lost(), release}, nil
	}
}

// rwAcquirer takes the write lock one time in three, else the read lock.
func rwAcquirer(m *zklock.RWMutex) acquirer {
	return func(ctx context.Context, rnd *rand.Rand) (*hold, error) {
		if rnd.IntN(3) == 0 {
			if err := m.Lock(ctx); err != nil {
				return nil, err
			}
			return &hold{ModeExclusive, 0, m.Token(), []zk.Op{m.Guard()}, m.Lost(), m.Unlock}, nil
		}
		if err := m.RLock(ctx); err != nil {
			return nil, err
		}
		return &hold{ModeRead, 0, m.Token(), []zk.Op{m.Guard()}, m.Lost(), m.RUnlock}, nil
	}
}
