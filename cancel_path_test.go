package zklock_test

import (
	"context"
	pathpkg "path"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// waitCalls are the blocking acquisitions of every primitive, each set up
// on path in session s; the holder (another session) holds path. Each
// returns the call's error.
var waitCalls = map[string]func(ctx context.Context, s *zklock.Session, path string) error{
	"Mutex.Lock": lockMutex,
	"ReentrantMutex.Lock": func(ctx context.Context, s *zklock.Session, path string) error {
		m, err := zklock.NewReentrantMutex(s, path)
		if err != nil {
			return err
		}
		return m.Lock(ctx)
	},
	"RWMutex.Lock": func(ctx context.Context, s *zklock.Session, path string) error {
		m, err := zklock.NewRWMutex(s, path)
		if err != nil {
			return err
		}
		return m.Lock(ctx)
	},
	"RWMutex.RLock": func(ctx context.Context, s *zklock.Session, path string) error {
		m, err := zklock.NewRWMutex(s, path)
		if err != nil {
			return err
		}
		return m.RLock(ctx)
	},
	"Semaphore.Acquire": func(ctx context.Context, s *zklock.Session, path string) error {
		sem, err := zklock.NewSemaphore(s, path, 1)
		if err != nil {
			return err
		}
		_, err = sem.Acquire(ctx, 1)
		return err
	},
	"Election.Campaign": campaign,
	"MultiLock.Lock": func(ctx context.Context, s *zklock.Session, path string) error {
		// Its first part in path order is free, its second is held.
		free, err := zklock.NewMutex(s, firstPart(path))
		if err != nil {
			return err
		}
		held, err := zklock.NewMutex(s, path)
		if err != nil {
			return err
		}
		ml, err := zklock.NewMultiLock(free, held)
		if err != nil {
			return err
		}
		return ml.Lock(ctx)
	},
}

// Issue 47: a Lock cancelled while it waited returned ctx's error alone
// ("context deadline exceeded"), naming no lock; a program waiting on
// several could not tell which. Every blocking acquisition names its path
// once, for a deadline that passes while it waits, a ctx cancelled while
// it waits and a ctx ended before the call, and errors.Is still finds
// ctx's error.
func TestBlockingCallErrorNamesPath(t *testing.T) {
	t.Parallel()
	zk := shared(t)
	holder := newSession(t, zk.Servers())
	waiter := newSession(t, zk.Servers())
	for name, call := range waitCalls {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := ctxFor(t)
			path := lockPath(t, "lock")
			holdPath(ctx, t, holder, name, path)
			ends := map[string]struct {
				ctx  func() (context.Context, context.CancelFunc)
				want error
			}{
				"deadline while waiting": {func() (context.Context, context.CancelFunc) {
					return context.WithTimeout(ctx, 300*time.Millisecond)
				}, context.DeadlineExceeded},
				"cancelled while waiting": {func() (context.Context, context.CancelFunc) {
					c, cancel := context.WithCancel(ctx)
					time.AfterFunc(300*time.Millisecond, cancel)
					return c, cancel
				}, context.Canceled},
				"cancelled before the call": {func() (context.Context, context.CancelFunc) {
					c, cancel := context.WithCancel(ctx)
					cancel()
					return c, cancel
				}, context.Canceled},
			}
			for end, e := range ends {
				cctx, cancel := e.ctx()
				err := call(cctx, waiter, path)
				cancel()
				require.ErrorIs(t, err, e.want, end)
				want := path
				if name == "MultiLock.Lock" && end == "cancelled before the call" {
					want = firstPart(path) // where it would have begun, as a part's error names it
				}
				if n := strings.Count(err.Error(), want); n != 1 {
					t.Errorf("%s: %q names %s %d times; want once", end, err, want, n)
				}
			}
		})
	}
}

// holdPath holds path in s with the kind of primitive the call named
// waits for, so that the call blocks.
func holdPath(ctx context.Context, t *testing.T, s *zklock.Session, call, path string) {
	t.Helper()
	var err error
	switch {
	case strings.HasPrefix(call, "RWMutex"):
		var m *zklock.RWMutex
		if m, err = zklock.NewRWMutex(s, path); err == nil {
			err = m.Lock(ctx)
		}
	case strings.HasPrefix(call, "Semaphore"):
		var sem *zklock.Semaphore
		if sem, err = zklock.NewSemaphore(s, path, 1); err == nil {
			_, err = sem.Acquire(ctx, 1)
		}
	default:
		err = lockMutex(ctx, s, path)
	}
	if err != nil {
		t.Fatalf("holding %s: %v", path, err)
	}
}

// firstPart is the path of the MultiLock's free part, before path.
func firstPart(path string) string { return pathpkg.Dir(path) + "/a-free" }

// The releases block too (they retry through connection loss): one whose
// ctx ended names its path once, errors.Is finds ctx's error, and the hold
// is kept, so a release with a live ctx then succeeds.
func TestReleaseErrorNamesPath(t *testing.T) {
	t.Parallel()
	zk := shared(t)
	s := newSession(t, zk.Servers())
	type release func(ctx context.Context) error
	takes := map[string]func(ctx context.Context, path string) (release, error){
		"Mutex.Unlock": func(ctx context.Context, path string) (release, error) {
			m, err := zklock.NewMutex(s, path)
			if err != nil {
				return nil, err
			}
			return m.Unlock, m.Lock(ctx)
		},
		"ReentrantMutex.Unlock": func(ctx context.Context, path string) (release, error) {
			m, err := zklock.NewReentrantMutex(s, path)
			if err != nil {
				return nil, err
			}
			return m.Unlock, m.Lock(ctx)
		},
		"RWMutex.Unlock": func(ctx context.Context, path string) (release, error) {
			m, err := zklock.NewRWMutex(s, path)
			if err != nil {
				return nil, err
			}
			return m.Unlock, m.Lock(ctx)
		},
		"RWMutex.RUnlock": func(ctx context.Context, path string) (release, error) {
			m, err := zklock.NewRWMutex(s, path)
			if err != nil {
				return nil, err
			}
			return m.RUnlock, m.RLock(ctx)
		},
		"RWMutex.Downgrade": func(ctx context.Context, path string) (release, error) {
			m, err := zklock.NewRWMutex(s, path)
			if err != nil {
				return nil, err
			}
			return m.Downgrade, m.Lock(ctx)
		},
		"Lease.Release": func(ctx context.Context, path string) (release, error) {
			sem, err := zklock.NewSemaphore(s, path, 1)
			if err != nil {
				return nil, err
			}
			l, err := sem.Acquire(ctx, 1)
			if err != nil {
				return nil, err
			}
			return l.Release, nil
		},
		"Election.Resign": func(ctx context.Context, path string) (release, error) {
			e, err := zklock.NewElection(s, path)
			if err != nil {
				return nil, err
			}
			_, err = e.Campaign(ctx, nil)
			return e.Resign, err
		},
	}
	for name, take := range takes {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			ctx := ctxFor(t)
			path := lockPath(t, "lock")
			rel, err := take(ctx, path)
			require.NoError(t, err)
			done, cancel := context.WithCancel(ctx)
			cancel()
			err = rel(done)
			require.ErrorIs(t, err, context.Canceled)
			if n := strings.Count(err.Error(), path); n != 1 {
				t.Errorf("%q names %s %d times; want once", err, path, n)
			}
			require.NoError(t, rel(ctx), "the release after the cancelled one")
		})
	}
}
