package zklock_test

import (
	"context"
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// holder takes one kind of primitive on path and returns its release.
type holder struct {
	name string
	kind zklock.Kind // WrongKindError.Found when another kind finds it
	take func(ctx context.Context, s *zklock.Session, path string) (release func(context.Context) error, err error)
}

// contender is a call that must refuse a path held by another kind.
type contender struct {
	name   string
	family string // holders of the same family share the path by design
	call   func(ctx context.Context, s *zklock.Session, path string) error
}

var kindHolders = []holder{
	{"Mutex", zklock.KindMutex, func(ctx context.Context, s *zklock.Session, p string) (func(context.Context) error, error) {
		m, err := zklock.NewMutex(s, p)
		if err != nil {
			return nil, err
		}
		return m.Unlock, m.Lock(ctx)
	}},
	{"Election", zklock.KindMutex, func(ctx context.Context, s *zklock.Session, p string) (func(context.Context) error, error) {
		e, err := zklock.NewElection(s, p)
		if err != nil {
			return nil, err
		}
		_, err = e.Campaign(ctx, nil)
		return e.Resign, err
	}},
	{"RWMutex write", zklock.KindRWMutexWrite, func(ctx context.Context, s *zklock.Session, p string) (func(context.Context) error, error) {
		m, err := zklock.NewRWMutex(s, p)
		if err != nil {
			return nil, err
		}
		return m.Unlock, m.Lock(ctx)
	}},
	{"RWMutex read", zklock.KindRWMutexRead, func(ctx context.Context, s *zklock.Session, p string) (func(context.Context) error, error) {
		m, err := zklock.NewRWMutex(s, p)
		if err != nil {
			return nil, err
		}
		return m.RUnlock, m.RLock(ctx)
	}},
	{"Semaphore", zklock.KindSemaphore, semTake()},
	{"Semaphore queue", zklock.KindSemaphorePermit, semTake(zklock.WithPermitLayout())},
	{"Mutex sequence layout", zklock.KindMutexSeq, func(ctx context.Context, s *zklock.Session, p string) (func(context.Context) error, error) {
		m, err := zklock.NewMutex(s, p, zklock.WithSequenceLayout())
		if err != nil {
			return nil, err
		}
		return m.Unlock, m.Lock(ctx)
	}},
}

var familyOf = map[zklock.Kind]string{
	zklock.KindMutex: "lock", zklock.KindRWMutexWrite: "rw", zklock.KindRWMutexRead: "rw", zklock.KindSemaphore: "sem",
	zklock.KindSemaphorePermit: "semq", zklock.KindMutexSeq: "seq",
}

var kindContenders = []contender{
	{"Mutex.Lock", "lock", func(ctx context.Context, s *zklock.Session, p string) error {
		m, err := zklock.NewMutex(s, p)
		if err != nil {
			return err
		}
		return m.Lock(ctx)
	}},
	{"Mutex.TryLock", "lock", func(ctx context.Context, s *zklock.Session, p string) error {
		m, err := zklock.NewMutex(s, p)
		if err != nil {
			return err
		}
		return m.TryLock(ctx)
	}},
	{"ReentrantMutex.Lock", "lock", func(ctx context.Context, s *zklock.Session, p string) error {
		m, err := zklock.NewReentrantMutex(s, p)
		if err != nil {
			return err
		}
		return m.Lock(ctx)
	}},
	{"Election.Campaign", "lock", func(ctx context.Context, s *zklock.Session, p string) error {
		e, err := zklock.NewElection(s, p)
		if err != nil {
			return err
		}
		_, err = e.Campaign(ctx, nil)
		return err
	}},
	{"RWMutex.Lock", "rw", func(ctx context.Context, s *zklock.Session, p string) error {
		return newRWFor(s, p, func(m *zklock.RWMutex) error { return m.Lock(ctx) })
	}},
	{"RWMutex.TryLock", "rw", func(ctx context.Context, s *zklock.Session, p string) error {
		return newRWFor(s, p, func(m *zklock.RWMutex) error { return m.TryLock(ctx) })
	}},
	{"RWMutex.RLock", "rw", func(ctx context.Context, s *zklock.Session, p string) error {
		return newRWFor(s, p, func(m *zklock.RWMutex) error { return m.RLock(ctx) })
	}},
	{"RWMutex.TryRLock", "rw", func(ctx context.Context, s *zklock.Session, p string) error {
		return newRWFor(s, p, func(m *zklock.RWMutex) error { return m.TryRLock(ctx) })
	}},
	{"Semaphore.Acquire", "sem", semCall(false)},
	{"Semaphore.TryAcquire", "sem", semCall(true)},
	{"Semaphore.Acquire (queue layout)", "semq", semCall(false, zklock.WithPermitLayout())},
	{"Semaphore.TryAcquire (queue layout)", "semq", semCall(true, zklock.WithPermitLayout())},
	{"Mutex.Lock (sequence layout)", "seq", seqCall(false)},
	{"Mutex.TryLock (sequence layout)", "seq", seqCall(true)},
}

// seqCall locks a Mutex in the sequence layout on the path.
func seqCall(try bool) func(ctx context.Context, s *zklock.Session, p string) error {
	return func(ctx context.Context, s *zklock.Session, p string) error {
		m, err := zklock.NewMutex(s, p, zklock.WithSequenceLayout())
		if err != nil {
			return err
		}
		if try {
			return m.TryLock(ctx)
		}
		return m.Lock(ctx)
	}
}

// semTake holds one lease of a semaphore of two on the path.
func semTake(opts ...zklock.Option) func(ctx context.Context, s *zklock.Session, p string) (func(context.Context) error, error) {
	return func(ctx context.Context, s *zklock.Session, p string) (func(context.Context) error, error) {
		sem, err := zklock.NewSemaphore(s, p, 2, opts...)
		if err != nil {
			return nil, err
		}
		l, err := sem.Acquire(ctx, 1)
		if err != nil {
			return nil, err
		}
		return l.Release, nil
	}
}

// semCall takes one lease of a semaphore of two on the path.
func semCall(try bool, opts ...zklock.Option) func(ctx context.Context, s *zklock.Session, p string) error {
	return func(ctx context.Context, s *zklock.Session, p string) error {
		sem, err := zklock.NewSemaphore(s, p, 2, opts...)
		if err != nil {
			return err
		}
		if try {
			_, err = sem.TryAcquire(ctx, 1)
		} else {
			_, err = sem.Acquire(ctx, 1)
		}
		return err
	}
}

func newRWFor(s *zklock.Session, p string, f func(*zklock.RWMutex) error) error {
	m, err := zklock.NewRWMutex(s, p)
	if err != nil {
		return err
	}
	return f(m)
}

// layout lists path's children and those of its locks and leases children,
// as "child" and "child/grandchild".
func layout(t *testing.T, s *zklock.Session, path string) []string {
	t.Helper()
	var out []string
	for _, n := range nodeNames(t, s, path) {
		out = append(out, n)
		for _, g := range nodeNames(t, s, path+"/"+n) {
			out = append(out, n+"/"+g)
		}
	}
	slices.Sort(out)
	return out
}

// A primitive that finds another kind's nodes on its path fails at once
// with ErrWrongKind and leaves nothing behind, whichever came first
// (issue 23). Mutex, ReentrantMutex and Election share "lock-" nodes by
// design and are not refused by each other.
func TestWrongKindRefused(t *testing.T) {
	t.Parallel()
	c := shared(t)
	for _, h := range kindHolders {
		for _, k := range kindContenders {
			if familyOf[h.kind] == k.family {
				continue
			}
			t.Run(h.name+" then "+k.name, func(t *testing.T) {
				ctx := ctxFor(t)
				ss := manySessions(t, c.Servers(), 2)
				path := lockPath(t, "p")
				release, err := h.take(ctx, ss[0], path)
				require.NoError(t, err)
				before := layout(t, ss[0], path)

				// Bounded so that a contender that waits instead fails the
				// assertion rather than hang the test.
				kctx, cancel := context.WithTimeout(ctx, 5*time.Second)
				defer cancel()
				err = k.call(kctx, ss[1], path)
				require.ErrorIs(t, err, zklock.ErrWrongKind)
				var wk *zklock.WrongKindError
				require.True(t, errors.As(err, &wk), "%T %v", err, err)
				require.Equal(t, h.kind, wk.Found, "%v", err)
				require.Equal(t, path, wk.Path)
				require.Equal(t, before, layout(t, ss[0], path), "only the first holder's nodes remain")
				require.NoError(t, release(ctx))
			})
		}
	}
}

// Kinds that share a queue by design are not refused: Curator's lock nodes
// and Kazoo's __lock__ nodes are contenders of a Mutex's queue, and children
// of no known kind are ignored; a Curator LeaderLatch node is refused.
func TestWrongKindSharedKinds(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, "p")
	m, err := zklock.NewMutex(s, path)
	require.NoError(t, err)
	for _, kind := range []string{"lock-", "__lock__"} {
		n := curatorNode(t, s, path, kind)
		require.ErrorIs(t, m.TryLock(ctx), zklock.ErrLocked, kind)
		require.NoError(t, s.Client().Delete(ctx, n, -1))
	}
	_, err = s.Client().Create(ctx, path+"/unrelated", nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
	require.NoError(t, err)
	require.NoError(t, m.TryLock(ctx), "a child of no known kind is ignored")
	require.NoError(t, m.Unlock(ctx))

	n := curatorNode(t, s, path, "latch-")
	err = m.Lock(ctx)
	var wk *zklock.WrongKindError
	require.ErrorAs(t, err, &wk)
	require.Equal(t, zklock.Kind("curator_leader_latch"), wk.Found)
	require.Equal(t, n[len(path)+1:], wk.Node)
	require.Equal(t, sorted([]string{"unrelated", n[len(path)+1:]}), sorted(nodeNames(t, s, path)), "the refused Mutex left its node")
}

func sorted(s []string) []string {
	slices.Sort(s)
	return s
}
