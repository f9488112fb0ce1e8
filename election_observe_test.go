package zklock_test

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// sameValue reports whether got is the leader with value want ("" for none).
func sameValue(got zklock.LeaderInfo, want string) bool {
	if want == "" {
		return got.Node == ""
	}
	return bytes.Equal(got.Value, []byte(want))
}

// next reads one LeaderInfo, failing after d or if ch closes.
func next(t *testing.T, ch <-chan zklock.LeaderInfo, d time.Duration) zklock.LeaderInfo {
	t.Helper()
	select {
	case info, ok := <-ch:
		require.True(t, ok, "observe channel closed")
		return info
	case <-time.After(d):
		t.Fatalf("no leader change within %v", d)
	}
	return zklock.LeaderInfo{}
}

func TestElectionObserveSeesEveryChangeInOrder(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	obs := newElection(t, newSession(t, c.Servers()), path)
	ch, err := obs.Observe(ctx)
	require.NoError(t, err)
	require.True(t, sameValue(next(t, ch, 10*time.Second), ""), "no leader at first")

	var es []*zklock.Election
	for i := 0; i < 3; i++ {
		es = append(es, newElection(t, newSession(t, c.Servers()), path))
	}
	first, err := es[0].Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	info := next(t, ch, 10*time.Second)
	require.True(t, sameValue(info, "a"), "got %q", info.Value)
	require.Equal(t, first.Token(), info.Token)
	require.Equal(t, zklock.NodeOf(first), info.Node)
	pending := []<-chan termResult{campaignAsync(ctx, es[1], "b")}
	s := newSession(t, c.Servers())
	eventually(t, 10*time.Second, "b queued", func() bool { return len(children(t, s, path)) == 2 })
	pending = append(pending, campaignAsync(ctx, es[2], "c"))
	eventually(t, 10*time.Second, "c queued", func() bool { return len(children(t, s, path)) == 3 })
	select {
	case info := <-ch:
		t.Fatalf("a candidate queueing is not a leader change: %+v", info)
	case <-time.After(200 * time.Millisecond):
	}

	last := first.Token()
	for i, want := range []string{"b", "c"} {
		require.NoError(t, es[i].Resign(ctx))
		info := next(t, ch, 10*time.Second)
		require.True(t, sameValue(info, want), "want %s, got %q", want, info.Value)
		require.Greater(t, info.Token, last)
		last = info.Token
		r := <-pending[i]
		require.NoError(t, r.err)
		require.Equal(t, info.Token, r.t.Token())
	}
	require.NoError(t, es[2].Resign(ctx))
	require.True(t, sameValue(next(t, ch, 10*time.Second), ""), "no leader at the end")
}

func TestElectionObserveSlowReaderGetsLatest(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	obsCtx, stop := context.WithCancel(ctx)
	obs := newElection(t, newSession(t, c.Servers()), path)
	ch, err := obs.Observe(obsCtx)
	require.NoError(t, err)

	// Ten terms go by while nobody reads.
	var e [2]*zklock.Election
	for i := range e {
		e[i] = newElection(t, newSession(t, c.Servers()), path)
	}
	var last *zklock.Term
	for i := 0; i < 10; i++ {
		term, err := e[i%2].Campaign(ctx, []byte{byte('a' + i)})
		require.NoError(t, err)
		if i < 9 {
			require.NoError(t, e[i%2].Resign(ctx))
		}
		last = term
	}
	eventually(t, 10*time.Second, "the observer saw the last term", func() bool {
		info, err := zklock.LeaderOf(ctx, obs)
		return err == nil && info.Token == last.Token()
	})
	prev := int64(-1)
	for info := next(t, ch, 10*time.Second); info.Token != last.Token(); info = next(t, ch, 10*time.Second) {
		require.GreaterOrEqual(t, info.Token, prev, "a stale state after a newer one")
		prev = info.Token
	}
	require.NoError(t, e[1].Resign(ctx))
	require.True(t, sameValue(next(t, ch, 10*time.Second), ""))

	// The churn left no watches behind: at most the observer's one on the
	// election path (a deleted node's watch is gone once it fired).
	eventually(t, 10*time.Second, "watches drained", func() bool {
		out, err := c.FourLetter(ctx, 0, "wchs")
		require.NoError(t, err)
		return strings.Contains(out, "Total watches:1") || strings.Contains(out, "Total watches:0")
	})
	stop()
	select {
	case _, ok := <-ch:
		require.False(t, ok, "a value after ctx ended")
	case <-time.After(10 * time.Second):
		t.Fatal("Observe's channel not closed after ctx ended")
	}
}

func TestElectionObserveClosesWithSession(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, c.Servers())
	ch, err := newElection(t, s, lockPath(t, "e")).Observe(ctx)
	require.NoError(t, err)
	next(t, ch, 10*time.Second)
	require.NoError(t, s.Close())
	select {
	case _, ok := <-ch:
		require.False(t, ok)
	case <-time.After(10 * time.Second):
		t.Fatal("Observe's channel not closed after the session closed")
	}
}
