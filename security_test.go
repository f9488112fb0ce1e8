package zklock_test

import (
	"context"
	"path"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// digestACL is the creator-all ACL of a node made by a session
// authenticated as user:pass, as the server stores it.
func digestACL(user, pass string) []zk.ACL {
	return zk.DigestACL(zk.PermAll, user, pass)
}

// tree lists path and every node below it, depth first.
func tree(t *testing.T, c *zk.Client, p string) []string {
	t.Helper()
	out := []string{p}
	kids, _, err := c.Children(t.Context(), p)
	require.NoError(t, err, "list %s", p)
	sort.Strings(kids)
	for _, k := range kids {
		out = append(out, tree(t, c, path.Join(p, k))...)
	}
	return out
}

// TestSecurityACLOnEveryNode holds every primitive at once, including the
// downgraded read node and a semaphore waiter (which makes the semaphore's
// locks parent), and checks that every node zklock made, parents included,
// carries the session's creator-only ACL.
func TestSecurityACLOnEveryNode(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	alice := newSession(t, c.Servers(), zklock.WithDigestAuth("alice", "secret"))
	root := lockPath(t, "")

	m, err := zklock.NewMutex(alice, root+"mutex")
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rw, err := zklock.NewRWMutex(alice, root+"rw")
	require.NoError(t, err)
	require.NoError(t, rw.Lock(ctx))
	require.NoError(t, rw.Downgrade(ctx)) // a node made by Join
	sem, err := zklock.NewSemaphore(alice, root+"sem", 1)
	require.NoError(t, err)
	lease, err := sem.Acquire(ctx, 1)
	require.NoError(t, err)
	waiter := make(chan error, 1)
	wctx, cancel := context.WithCancel(ctx)
	go func() {
		l, err := sem.Acquire(wctx, 1)
		if err == nil {
			err = l.Release(ctx)
		}
		waiter <- err
	}()
	eventually(t, 20*time.Second, "a semaphore waiter queues", func() bool {
		cs, err := zklock.ContendersOf(ctx, sem)
		return err == nil && len(cs) == 1
	})
	e, err := zklock.NewElection(alice, root+"election")
	require.NoError(t, err)
	term, err := e.Campaign(ctx, []byte("alice"))
	require.NoError(t, err)
	require.NoError(t, term.Err())

	want := digestACL("alice", "secret")
	nodes := tree(t, alice.Client(), path.Dir(root+"x"))
	require.Greater(t, len(nodes), 12, "nodes: %v", nodes)
	for _, p := range append(nodes, "/zklock-test") {
		acl, _, err := alice.Client().GetACL(ctx, p)
		require.NoError(t, err, p)
		require.Equal(t, want, acl, "ACL of %s", p)
	}
	cancel()
	require.ErrorIs(t, <-waiter, context.Canceled)
	require.NoError(t, lease.Release(ctx))
	require.NoError(t, e.Resign(ctx))
}

// TestSecurityOtherCredentialsCannotTamper: a session authenticated as
// another user can neither delete, overwrite nor re-ACL a held lock's node,
// and its own lock attempts fail at once with zklock.ErrNoAuth; the holder keeps
// the lock.
func TestSecurityOtherCredentialsCannotTamper(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	alice := newSession(t, c.Servers(), zklock.WithDigestAuth("alice", "secret"))
	mallory := newSession(t, c.Servers(), zklock.WithDigestAuth("mallory", "guess"))
	p := lockPath(t, "lock")

	held, err := zklock.NewMutex(alice, p)
	require.NoError(t, err)
	require.NoError(t, held.Lock(ctx))
	node := nodeOf(held.Guard())

	mc := mallory.Client()
	require.ErrorIs(t, mc.Delete(ctx, node, -1), zk.ErrNoAuth)
	_, err = mc.Set(ctx, node, []byte("mallory"), -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	_, err = mc.SetACL(ctx, node, zk.WorldACL(zk.PermAll), -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	_, err = mc.SetACL(ctx, p, zk.WorldACL(zk.PermAll), -1)
	require.ErrorIs(t, err, zk.ErrNoAuth)
	// A node slipped in ahead of the holder's would be a grant by tampering.
	_, err = mc.Create(ctx, p+"/_c_00000000-0000-0000-0000-000000000000-lock-", nil, zk.
		ModeEphemeralSequential, zk.WorldACL(zk.PermAll)...)
	require.ErrorIs(t, err, zk.ErrNoAuth)

	rival, err := zklock.NewMutex(mallory, p)
	require.NoError(t, err)
	require.ErrorIs(t, rival.TryLock(ctx), zk.ErrNoAuth)
	lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	err = rival.Lock(lctx)
	require.ErrorIs(t, err, zk.ErrNoAuth, "a permission error, not a wait: %v", err)
	require.NoError(t, lctx.Err())

	select {
	case <-held.Lost():
		t.Fatal("the holder lost the lock")
	default:
	}
	cs, err := zklock.ContendersOf(ctx, held)
	require.NoError(t, err)
	require.Len(t, cs, 1)
	require.Equal(t, node, cs[0].Path)
	require.NoError(t, held.Unlock(ctx))
}

// TestSecurityNoCredentials: a session without credentials gets
// zklock.ErrNoAuth from every primitive on paths another user owns, at once,
// and leaves nothing behind.
func TestSecurityNoCredentials(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	alice := newSession(t, c.Servers(), zklock.WithDigestAuth("alice", "secret"))
	anon := newSession(t, c.Servers())
	root := lockPath(t, "")

	m, err := zklock.NewMutex(alice, root+"mutex")
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	rw, err := zklock.NewRWMutex(alice, root+"rw")
	require.NoError(t, err)
	require.NoError(t, rw.RLock(ctx))
	sem, err := zklock.NewSemaphore(alice, root+"sem", 2)
	require.NoError(t, err)
	lease, err := sem.Acquire(ctx, 1)
	require.NoError(t, err)
	e, err := zklock.NewElection(alice, root+"election")
	require.NoError(t, err)
	_, err = e.Campaign(ctx, nil)
	require.NoError(t, err)
	before := tree(t, alice.Client(), path.Dir(root+"x"))

	attempts := map[string]func(context.Context) error{
		"Mutex.Lock": func(ctx context.Context) error {
			m, _ := zklock.NewMutex(anon, root+"mutex")
			return m.Lock(ctx)
		},
		"RWMutex.RLock": func(ctx context.Context) error {
			rw, _ := zklock.NewRWMutex(anon, root+"rw")
			return rw.RLock(ctx)
		},
		"RWMutex.Lock": func(ctx context.Context) error {
			rw, _ := zklock.NewRWMutex(anon, root+"rw")
			return rw.Lock(ctx)
		},
		"Semaphore.Acquire": func(ctx context.Context) error {
			s, _ := zklock.NewSemaphore(anon, root+"sem", 2)
			_, err := s.Acquire(ctx, 1)
			return err
		},
		"Election.Campaign": func(ctx context.Context) error {
			e, _ := zklock.NewElection(anon, root+"election")
			_, err := e.Campaign(ctx, nil)
			return err
		},
	}
	for name, attempt := range attempts {
		t.Run(name, func(t *testing.T) {
			actx, cancel := context.WithTimeout(ctx, 20*time.Second)
			defer cancel()
			err := attempt(actx)
			require.ErrorIs(t, err, zk.ErrNoAuth, "got %v", err)
			require.NoError(t, actx.Err(), "it waited instead of failing")
		})
	}
	require.Equal(t, before, tree(t, alice.Client(), path.Dir(root+"x")), "nodes were left behind")
	require.NoError(t, lease.Release(ctx))

	// An "auth" ACL needs an authenticated session: the server says so.
	strict := newSession(t, c.Servers(), zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	sm, err := zklock.NewMutex(strict, lockPath(t, "strict"))
	require.NoError(t, err)
	require.ErrorIs(t, sm.Lock(ctx), zk.ErrInvalidACL)
}

// TestAuthSurvivesReconnect: after the connection is reset, the session
// resumes with its credentials re-sent, so it can still release and take a
// lock whose nodes only its user may touch.
func TestAuthSurvivesReconnect(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithDigestAuth("alice", "secret"),
		zklock.WithSessionTimeout(10*time.Second))
	m, err := zklock.NewMutex(s, lockPath(t, "lock"))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	sid := s.SessionID()

	for range 2 {
		events, err := s.Subscribe(ctx)
		require.NoError(t, err)
		p.Reset()
		expect(t, events, 30*time.Second, zk.StateReconnected, zk.StateExpired)
		require.Equal(t, sid, s.SessionID())
		// Deleting our node needs DELETE on its parent, which only alice has.
		require.NoError(t, m.Unlock(ctx))
		require.NoError(t, m.Lock(ctx))
		_, err = s.Client().Set(ctx, nodeOf(m.Guard()), []byte("still alice"), -1)
		require.NoError(t, err)
	}
	require.NoError(t, m.Unlock(ctx))
}

func TestAuthOptionsRejectBadInput(t *testing.T) {
	ctx := ctxFor(t)
	for name, opt := range map[string]zklock.SessionOption{
		"empty user":         zklock.WithDigestAuth("", "pw"),
		"colon in user":      zklock.WithDigestAuth("a:b", "pw"),
		"nil TLS config":     zklock.WithTLS(nil),
		"nil metrics":        zklock.WithMetrics(nil),
		"empty auth":         zklock.WithAuth("", nil),
		"empty ACL given":    zklock.WithACL(),
		"ACL without scheme": zklock.WithACL(zk.ACL{Perms: zk.PermAll, ID: "anyone"}),
	} {
		t.Run(name, func(t *testing.T) {
			_, err := zklock.NewSession(ctx, opt)
			require.ErrorIs(t, err, zklock.ErrInvalidArgument)
		})
	}
}

// TestAuthSurvivesExpiry: the session that replaces an expired one is
// authenticated too, so it can queue again under a lock path only its user
// may write to.
func TestAuthSurvivesExpiry(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithDigestAuth("alice", "secret"))
	keeper := newSession(t, c.Servers(), zklock.WithDigestAuth("alice", "secret"))
	lp := lockPath(t, "lock")
	m, err := zklock.NewMutex(s, lp)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	// A persistent child keeps the CONTAINER (and its creator-only ACL) from
	// being reaped while the lock node is gone; the queue ignores it.
	_, err = keeper.Client().Create(ctx, lp+"/keep", nil, zk.ModePersistent, zk.AuthACL(zk.PermAll)...)
	require.NoError(t, err)
	old := s.SessionID()

	require.NoError(t, zktest.ExpireSession(ctx, c, p, old))
	eventually(t, 30*time.Second, "a new session", func() bool {
		return s.State() == zk.StateConnected && s.SessionID() != old
	})
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrLockLost)
	require.NoError(t, m.Lock(ctx))
	acl, _, err := s.Client().GetACL(ctx, nodeOf(m.Guard()))
	require.NoError(t, err)
	require.Equal(t, digestACL("alice", "secret"), acl)
	require.NoError(t, m.Unlock(ctx))
	require.NoError(t, keeper.Client().Delete(ctx, lp+"/keep", -1))
}

// TestNewSessionAuthFailed: a credential the server rejects (a scheme it
// has no provider for) makes NewSession return zk.ErrAuthFailed, without
// waiting for its ctx, and leave nothing running.
func TestNewSessionAuthFailed(t *testing.T) {
	c := standalone(t)
	ctx := ctxFor(t)
	s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...), zklock.WithAuth("nosuchscheme", []byte("x")))
	require.Nil(t, s)
	require.ErrorIs(t, err, zk.ErrAuthFailed)
	require.NoError(t, ctx.Err(), "it waited for its ctx")
}
