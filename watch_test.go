package zklock_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// watchTimeout bounds the wait for one state from WatchLock.
const watchTimeout = 15 * time.Second

// summary is what a state shows, in one line: the kind and limit, the
// holders' data, the waiters' data, and the holders asked to let go.
func summary(st zklock.LockState) string {
	data := func(cs []zklock.Contender) string {
		var out []string
		for _, c := range cs {
			out = append(out, string(c.Data))
		}
		return strings.Join(out, ",")
	}
	var rev []string
	for _, n := range st.Revoking {
		for _, c := range st.Holders {
			if c.Path == n {
				rev = append(rev, string(c.Data))
			}
		}
	}
	return fmt.Sprintf("%s/%d holders=%s waiting=%s revoking=%s", st.Kind, st.Limit,
		data(st.Holders), data(st.Waiting), strings.Join(rev, ","))
}

// nextState requires the next state on states, within watchTimeout, to be want.
func nextState(t *testing.T, states <-chan zklock.LockState, want string) zklock.LockState {
	t.Helper()
	select {
	case st, ok := <-states:
		require.True(t, ok, "states closed while waiting for %q", want)
		require.Equal(t, want, summary(st))
		return st
	case <-time.After(watchTimeout):
		t.Fatalf("no state within %v, want %q", watchTimeout, want)
	}
	return zklock.LockState{}
}

// until reads states until one is want (the states between are changes
// the test does not pin down: a semaphore client's steps), within
// watchTimeout.
func until(t *testing.T, states <-chan zklock.LockState, want string) zklock.LockState {
	t.Helper()
	deadline := time.After(watchTimeout)
	var seen []string
	for {
		select {
		case st, ok := <-states:
			require.True(t, ok, "states closed while waiting for %q; saw %q", want, seen)
			if summary(st) == want {
				return st
			}
			seen = append(seen, summary(st))
		case <-deadline:
			t.Fatalf("no state %q within %v; saw %q", want, watchTimeout, seen)
		}
	}
}

// watchLock starts WatchLock on its own session and returns its states.
func watchLock(t *testing.T, ctx context.Context, s *zklock.Session, p string) <-chan zklock.LockState {
	t.Helper()
	states, err := zklock.WatchLock(ctx, s, p)
	require.NoError(t, err)
	return states
}

func mutexWith(t *testing.T, s *zklock.Session, p, data string, opts ...zklock.Option) *zklock.Mutex {
	t.Helper()
	m, err := zklock.NewMutex(s, p, append(opts, zklock.WithData([]byte(data)))...)
	require.NoError(t, err)
	return m
}

// Each change of a Mutex is delivered, in order: a holder, a waiter
// arriving, a revocation request written into the holder's node, the
// holder's release (the waiter holds), the last release.
func TestWatchLockMutexChanges(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx, p := ctxFor(t), lockPath(t, "lock")
	s := newSession(t, c.Servers())
	states := watchLock(t, ctx, newSession(t, c.Servers()), p)
	st := nextState(t, states, "/0 holders= waiting= revoking=")
	require.Equal(t, p, st.Path)

	a := mutexWith(t, s, p, "a", zklock.WithRevocable(func() {}))
	require.NoError(t, a.Lock(ctx))
	nextState(t, states, "mutex/0 holders=a waiting= revoking=")
	b := mutexWith(t, s, p, "b")
	locked := make(chan error, 1)
	go func() { locked <- b.Lock(ctx) }()
	st = nextState(t, states, "mutex/0 holders=a waiting=b revoking=")
	require.Equal(t, zklock.KindMutex, st.Waiting[0].Kind)
	require.Equal(t, zklock.NodeOf(a), st.Holders[0].Path)

	revoked, err := zklock.Revoke(ctx, s, p)
	require.NoError(t, err)
	st = nextState(t, states, "mutex/0 holders=__REVOKE__ waiting=b revoking=__REVOKE__")
	require.Equal(t, revoked, st.Revoking)
	require.NoError(t, a.Unlock(ctx))
	require.NoError(t, <-locked)
	nextState(t, states, "mutex/0 holders=b waiting= revoking=")
	require.NoError(t, b.Unlock(ctx))
	nextState(t, states, "/0 holders= waiting= revoking=")
}

// An RWMutex is shown as one: readers holding, a writer waiting.
func TestWatchLockRWMutex(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx, p := ctxFor(t), lockPath(t, "rw")
	s := newSession(t, c.Servers())
	states := watchLock(t, ctx, newSession(t, c.Servers()), p)
	nextState(t, states, "/0 holders= waiting= revoking=")
	r, err := zklock.NewRWMutex(s, p, zklock.WithData([]byte("r")))
	require.NoError(t, err)
	require.NoError(t, r.RLock(ctx))
	nextState(t, states, "rwmutex/0 holders=r waiting= revoking=")
	w, err := zklock.NewRWMutex(s, p, zklock.WithData([]byte("w")))
	require.NoError(t, err)
	locked := make(chan error, 1)
	go func() { locked <- w.Lock(ctx) }()
	st := nextState(t, states, "rwmutex/0 holders=r waiting=w revoking=")
	require.Equal(t, zklock.KindRWMutexRead, st.Holders[0].Kind)
	require.Equal(t, zklock.KindRWMutexWrite, st.Waiting[0].Kind)
	require.NoError(t, r.RUnlock(ctx))
	require.NoError(t, <-locked)
	nextState(t, states, "rwmutex/0 holders=w waiting= revoking=")
	require.NoError(t, w.Unlock(ctx))
	nextState(t, states, "/0 holders= waiting= revoking=")
}

// Both semaphore layouts: each lease taken and given back is delivered,
// with the limit, and a client queued for a lease is a waiter.
func TestWatchLockSemaphore(t *testing.T) {
	t.Parallel()
	c := shared(t)
	for _, tc := range []struct {
		name string
		kind zklock.Kind
		opts []zklock.Option
	}{
		{"leases", zklock.KindSemaphore, nil},
		{"permits", zklock.KindSemaphorePermit, []zklock.Option{zklock.WithPermitLayout()}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, p := ctxFor(t), lockPath(t, "sem")
			s := newSession(t, c.Servers())
			states := watchLock(t, ctx, newSession(t, c.Servers()), p)
			nextState(t, states, "/0 holders= waiting= revoking=")
			sem := func(data string) *zklock.Semaphore {
				x, err := zklock.NewSemaphore(s, p, 2, append(tc.opts, zklock.WithData([]byte(data)))...)
				require.NoError(t, err)
				return x
			}
			a, b, w := sem("a"), sem("b"), sem("w")
			la, err := a.Acquire(ctx, 1)
			require.NoError(t, err)
			until(t, states, fmt.Sprintf("%s/2 holders=a waiting= revoking=", tc.kind))
			lb, err := b.Acquire(ctx, 1)
			require.NoError(t, err)
			until(t, states, fmt.Sprintf("%s/2 holders=a,b waiting= revoking=", tc.kind))
			got := make(chan error, 1)
			var lw *zklock.Lease
			go func() {
				var err error
				lw, err = w.Acquire(ctx, 1)
				got <- err
			}()
			until(t, states, fmt.Sprintf("%s/2 holders=a,b waiting=w revoking=", tc.kind))
			require.NoError(t, la.Release(ctx))
			require.NoError(t, <-got)
			until(t, states, fmt.Sprintf("%s/2 holders=b,w waiting= revoking=", tc.kind))
			require.NoError(t, lb.Release(ctx))
			require.NoError(t, lw.Release(ctx))
			want := fmt.Sprintf("%s/2 holders= waiting= revoking=", tc.kind)
			if tc.kind == zklock.KindSemaphorePermit {
				want = "/0 holders= waiting= revoking=" // the limit is in the nodes' names
			}
			until(t, states, want)
		})
	}
}

// A watcher cut off from the server and back on the same session, and a
// watcher whose session expired, set their watches again and deliver the
// state the lock reached meanwhile.
func TestWatchLockReconnectAndExpiry(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx, p := ctxFor(t), lockPath(t, "lock")
	s := newSession(t, c.Servers())
	px := zktest.NewProxy(t, c.Servers())
	ws := newSession(t, px.Addrs(), zklock.WithSessionTimeout(4*time.Second))
	events, err := ws.Client().Subscribe(ctx)
	require.NoError(t, err)
	states := watchLock(t, ctx, ws, p)
	nextState(t, states, "/0 holders= waiting= revoking=")

	px.Blackhole()
	awaitState(t, events, zk.StateSuspended)
	a := mutexWith(t, s, p, "a")
	require.NoError(t, a.Lock(ctx))
	px.Heal()
	awaitState(t, events, zk.StateReconnected)
	nextState(t, states, "mutex/0 holders=a waiting= revoking=")

	old := ws.Client().SessionID()
	require.NoError(t, zktest.ExpireSession(ctx, c, px, old))
	awaitState(t, events, zk.StateExpired)
	// The watches of the old session are gone: a change now is seen only
	// through the new session's.
	awaitState(t, events, zk.StateConnected)
	require.NoError(t, a.Unlock(ctx))
	nextState(t, states, "/0 holders= waiting= revoking=")
	b := mutexWith(t, s, p, "b")
	require.NoError(t, b.Lock(ctx))
	nextState(t, states, "mutex/0 holders=b waiting= revoking=")
	require.NoError(t, b.Unlock(ctx))
	nextState(t, states, "/0 holders= waiting= revoking=")
}

func awaitState(t *testing.T, events <-chan zk.Event, want zk.State) {
	t.Helper()
	deadline := time.After(watchTimeout)
	for {
		select {
		case ev := <-events:
			if ev.State == want {
				return
			}
		case <-deadline:
			t.Fatalf("no %v within %v", want, watchTimeout)
		}
	}
}

// The watcher's data watches are on the lock path and its holders' nodes,
// never on a waiter's: a waiter's arrival or departure costs the
// contenders nothing more than without a watcher.
func TestWatchLockWatchesNoWaiter(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx, p := ctxFor(t), lockPath(t, "lock")
	s := newSession(t, c.Servers())
	ws := newSession(t, c.Servers())
	states := watchLock(t, ctx, ws, p)
	nextState(t, states, "/0 holders= waiting= revoking=")
	a := mutexWith(t, s, p, "a")
	require.NoError(t, a.Lock(ctx))
	nextState(t, states, "mutex/0 holders=a waiting= revoking=")
	var waiters []*zklock.Mutex
	var st zklock.LockState
	done := make(chan error, 3)
	for _, d := range []string{"b", "c", "d"} {
		m := mutexWith(t, s, p, d)
		waiters = append(waiters, m)
		go func() {
			err := m.Lock(ctx)
			if err == nil {
				err = m.Unlock(ctx)
			}
			done <- err
		}()
		st = until(t, states, "mutex/0 holders=a waiting="+strings.Join([]string{"b", "c", "d"}[:len(waiters)], ",")+" revoking=")
	}
	want := []string{p, st.Holders[0].Path}
	slices.Sort(want)
	var got []string
	eventually(t, 10*time.Second, "the watcher's data watches on the path and the holder", func() bool {
		all, err := c.Watches(ctx)
		require.NoError(t, err)
		got = slices.Clone(all[ws.Client().SessionID()])
		slices.Sort(got)
		return slices.Equal(got, want)
	})
	for _, w := range st.Waiting {
		require.NotContains(t, got, w.Path, "a watch on waiter %s", path.Base(w.Path))
	}
	require.NoError(t, a.Unlock(ctx))
	for range waiters {
		require.NoError(t, <-done)
	}
	until(t, states, "/0 holders= waiting= revoking=")
}

// When ctx ends, the channel is closed and WatchLock's goroutines end
// (goleak checks the package at the end); so does the session's Close.
func TestWatchLockEnds(t *testing.T) {
	t.Parallel()
	c := shared(t)
	p := lockPath(t, "lock")
	s := newSession(t, c.Servers())
	for _, end := range []string{"ctx", "close"} {
		ctx, cancel := context.WithCancel(ctxFor(t))
		states := watchLock(t, ctx, s, p)
		nextState(t, states, "/0 holders= waiting= revoking=")
		if end == "ctx" {
			cancel()
		} else {
			require.NoError(t, s.Close())
		}
		select {
		case _, ok := <-states:
			for ok {
				_, ok = <-states
			}
		case <-time.After(watchTimeout):
			t.Fatalf("states not closed within %v after the %s ended", watchTimeout, end)
		}
		cancel()
	}
	//lint:ignore SA1012 a nil ctx is what is tested
	_, err := zklock.WatchLock(nil, s, p)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.WatchLock(context.Background(), s, "relative")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
}

// A read the server refuses (zk.ErrNoAuth: a contender's node that only
// its owner may read) is delivered as a state with Err set, and the stream
// goes on: once that node is gone, the next read is delivered with Err nil,
// though the path looks as it did before (free), so the reader learns that
// the failure is over.
func TestWatchLockErrInStream(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	p := lockPath(t, fmt.Sprint("lock-", time.Now().UnixNano())) // its own under -count
	owner := newSession(t, c.Servers(), zklock.WithAuth("digest", []byte("owner:secret")))
	for _, dir := range []string{path.Dir(path.Dir(p)), path.Dir(p), p} {
		if _, err := owner.Client().Create(ctx, dir, nil, zk.ModePersistent, zk.WorldACL(zk.PermAll)...); err != nil {
			require.ErrorIs(t, err, zk.ErrNodeExists)
		}
	}
	states := watchLock(t, ctx, newSession(t, c.Servers()), p)
	st := nextState(t, states, "/0 holders= waiting= revoking=")
	require.NoError(t, st.Err)

	node, err := owner.Client().Create(ctx, p+"/_c_00000000-0000-0000-0000-000000000000-lock-", []byte("secret"),
		zk.ModeEphemeralSequential, zk.DigestACL(zk.PermAll, "owner", "secret")...)
	require.NoError(t, err)
	select {
	case st, ok := <-states:
		require.True(t, ok, "states closed")
		require.ErrorIs(t, st.Err, zk.ErrNoAuth)
		require.Equal(t, p, st.Path)
		require.Empty(t, st.Holders, "the last good state's")
	case <-time.After(watchTimeout):
		t.Fatalf("no state within %v of the unreadable node", watchTimeout)
	}
	require.NoError(t, owner.Client().Delete(ctx, node, -1))
	deadline := time.After(watchTimeout)
	for {
		select {
		case st, ok := <-states:
			require.True(t, ok, "states closed after a refused read: the stream must go on")
			if st.Err != nil {
				require.ErrorIs(t, st.Err, zk.ErrNoAuth)
				continue // read again before the node went
			}
			require.Equal(t, "/0 holders= waiting= revoking=", summary(st))
			return
		case <-deadline:
			t.Fatalf("no state with Err nil within %v of the node's deletion", watchTimeout)
		}
	}
}

// An Election's path shows the leader as its holder and the candidates
// behind it as waiters, in the order they would lead.
func TestWatchLockElection(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx, p := ctxFor(t), lockPath(t, "election")
	s := newSession(t, c.Servers())
	states := watchLock(t, ctx, newSession(t, c.Servers()), p)
	nextState(t, states, "/0 holders= waiting= revoking=")
	leader, err := zklock.NewElection(s, p)
	require.NoError(t, err)
	_, err = leader.Campaign(ctx, []byte("first"))
	require.NoError(t, err)
	nextState(t, states, "mutex/0 holders=first waiting= revoking=")
	second, err := zklock.NewElection(s, p)
	require.NoError(t, err)
	led := make(chan error, 1)
	go func() {
		_, err := second.Campaign(ctx, []byte("second"))
		led <- err
	}()
	nextState(t, states, "mutex/0 holders=first waiting=second revoking=")
	require.NoError(t, leader.Resign(ctx))
	require.NoError(t, <-led)
	nextState(t, states, "mutex/0 holders=second waiting= revoking=")
	require.NoError(t, second.Resign(ctx))
	nextState(t, states, "/0 holders= waiting= revoking=")
}
