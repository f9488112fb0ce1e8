package zklock_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// curatorNode creates a node the way Curator does (protected name,
// EPHEMERAL_SEQUENTIAL, data = IP) through s's Client, and returns
// its path.
func curatorNode(t *testing.T, s *zklock.Session, dir, kind string) string {
	t.Helper()
	for i := 1; i <= len(dir); i++ {
		if i < len(dir) && dir[i] != '/' {
			continue
		}
		_, err := s.Client().Create(t.Context(), dir[:i], nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
		if err != nil && !errors.Is(err, zk.ErrNodeExists) {
			require.NoError(t, err)
		}
	}
	path, err := s.Client().Create(t.Context(), dir+"/_c_3f2c1a0e-8b7d-4e6f-9a1b-2c3d4e5f6a7b-"+kind, []byte("127.0.0.1"), zk.
		ModeEphemeralSequential, zk.WorldACL(zk.PermAll)...)
	require.NoError(t, err)
	return path
}

// Curator InterProcessReadWriteLock nodes take part in our order: its
// writer blocks our readers and writers, its reader blocks our writer only.
func TestRWMutexCuratorNodes(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, "rw")
	m := newRW(t, s, path)

	w := curatorNode(t, s, path, "__WRIT__")
	require.ErrorIs(t, m.TryRLock(ctx), zklock.ErrLocked)
	require.ErrorIs(t, m.TryLock(ctx), zklock.ErrLocked)
	require.NoError(t, s.Client().Delete(ctx, w, -1))

	r := curatorNode(t, s, path, "__READ__")
	require.NoError(t, m.TryRLock(ctx), "readers share with Curator's")
	require.NoError(t, m.RUnlock(ctx))
	require.ErrorIs(t, m.TryLock(ctx), zklock.ErrLocked)
	require.NoError(t, s.Client().Delete(ctx, r, -1))
	require.NoError(t, m.TryLock(ctx))
	require.NoError(t, m.Unlock(ctx))
}

// Every child of <path>/leases counts, as in Curator, and a Curator client
// queued on <path>/locks is not overtaken.
func TestSemaphoreCuratorNodes(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	path := lockPath(t, "sem")
	sem := newSem(t, s, path, 2)

	lease := curatorNode(t, s, path+"/leases", "lease-")
	l, err := sem.TryAcquire(ctx, 1)
	require.NoError(t, err)
	_, err = sem.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, zklock.ErrLocked, "Curator's lease counts")
	require.NoError(t, l.Release(ctx))

	lock := curatorNode(t, s, path+"/locks", "lock-")
	_, err = sem.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, zklock.ErrLocked, "a queued Curator client goes first")
	require.NoError(t, s.Client().Delete(ctx, lock, -1))
	require.NoError(t, s.Client().Delete(ctx, lease, -1))
	l, err = sem.TryAcquire(ctx, 2)
	require.NoError(t, err)
	require.NoError(t, l.Release(ctx))
}
