package zklock_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// newElection returns an Election on path through s.
func newElection(t *testing.T, s *zklock.Session, path string) *zklock.Election {
	t.Helper()
	e, err := zklock.NewElection(s, path)
	require.NoError(t, err)
	return e
}

// campaignAsync runs Campaign on a goroutine; the result arrives on the
// returned channel.
func campaignAsync(ctx context.Context, e *zklock.Election, value string) <-chan termResult {
	ch := make(chan termResult, 1)
	go func() {
		t, err := e.Campaign(ctx, []byte(value))
		ch <- termResult{t, err}
	}()
	return ch
}

type termResult struct {
	t   *zklock.Term
	err error
}

// children returns the names under path, none if it does not exist.
func children(t *testing.T, s *zklock.Session, path string) []string {
	t.Helper()
	names, _, err := s.Client().Children(t.Context(), path)
	if err != nil && !strings.Contains(err.Error(), "node does not exist") {
		require.NoError(t, err)
	}
	return names
}

func TestElectionBadInput(t *testing.T) {
	t.Parallel()
	c := shared(t)
	s := newSession(t, c.Servers())
	ctx := ctxFor(t)
	_, err := zklock.NewElection(nil, "/e")
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	for _, p := range []string{"", "e", "/", "/e/", "/a//b", "/a/../b", "/zookeeper/e", "/a\x00b"} {
		_, err := zklock.NewElection(s, p)
		require.ErrorIs(t, err, zklock.ErrInvalidArgument, "path %q", p)
	}
	_, err = zklock.NewElection(s, "/e", nil)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	_, err = zklock.NewElection(s, "/e", zklock.WithData(make([]byte, zk.MaxDataSize+1)))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)

	e := newElection(t, s, lockPath(t, "e"))
	var nilCtx context.Context
	_, err = e.Campaign(nilCtx, nil)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	require.ErrorIs(t, e.Resign(nilCtx), zklock.ErrInvalidArgument)
	_, err = e.Observe(nilCtx)
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	require.ErrorIs(t, e.Run(nilCtx, nil, func(context.Context, *zklock.Term) error { return nil }), zklock.ErrInvalidArgument)
	require.ErrorIs(t, e.Run(ctx, nil, nil), zklock.ErrInvalidArgument)

	_, err = e.Campaign(ctx, make([]byte, zk.MaxDataSize+1))
	require.ErrorIs(t, err, zklock.ErrInvalidArgument)
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrNotLocked)
	leader, err := zklock.LeaderOf(ctx, e)
	require.NoError(t, err)
	require.Empty(t, leader.Path, "nobody campaigns: no leader")
	done, cancel := context.WithCancel(ctx)
	cancel()
	_, err = e.Campaign(done, nil)
	require.ErrorIs(t, err, context.Canceled)
	require.Empty(t, children(t, s, lockPath(t, "e")))
}

func TestElectionCampaignCancelledLeavesNothing(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	s1, s2 := newSession(t, c.Servers()), newSession(t, c.Servers())
	leader := newElection(t, s1, path)
	term, err := leader.Campaign(ctx, []byte("a"))
	require.NoError(t, err)

	e := newElection(t, s2, path)
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	queued := campaignAsync(cctx, e, "b")
	awaitEphemeralOf(t, s1.Client(), path, s2.Client().SessionID()) // cancel a queued candidate
	cancel()
	select {
	case r := <-queued:
		require.ErrorIs(t, r.err, context.Canceled)
	case <-time.After(10 * time.Second):
		t.Fatal("the cancelled Campaign did not return")
	}
	require.Equal(t, []string{zklock.NodeOf(term)[len(path)+1:]}, children(t, s1, path), "the cancelled candidate left its node")
	require.ErrorIs(t, e.Resign(ctx), zklock.ErrNotLocked)

	// Cancelled while the create may be in flight: nothing remains either.
	for i := 0; i < 5; i++ {
		short, cancel := context.WithTimeout(ctx, time.Duration(i)*time.Millisecond)
		_, err := e.Campaign(short, []byte("b"))
		cancel()
		require.ErrorIs(t, err, context.DeadlineExceeded)
	}
	eventually(t, 10*time.Second, "only the leader's node remains", func() bool {
		return len(children(t, s1, path)) == 1
	})
	require.Nil(t, term.Err())
}

func TestElectionResignHandsOver(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	var es []*zklock.Election
	for i := 0; i < 3; i++ {
		es = append(es, newElection(t, newSession(t, c.Servers()), path))
	}
	s := newSession(t, c.Servers())
	first, err := es[0].Campaign(ctx, []byte("a"))
	require.NoError(t, err)
	_, err = es[0].Campaign(ctx, []byte("a"))
	require.ErrorIs(t, err, zklock.ErrAlreadyLocked)
	second := campaignAsync(ctx, es[1], "b")
	eventually(t, 10*time.Second, "b queued", func() bool { return len(children(t, s, path)) == 2 })
	third := campaignAsync(ctx, es[2], "c")
	eventually(t, 10*time.Second, "c queued", func() bool { return len(children(t, s, path)) == 3 })

	info, err := zklock.LeaderOf(ctx, es[2])
	require.NoError(t, err)
	require.Equal(t, "a", string(info.Data))
	cands, err := zklock.ContendersOf(ctx, es[2])
	require.NoError(t, err)
	require.Len(t, cands, 3)
	for i, want := range []string{"a", "b", "c"} {
		require.Equal(t, want, string(cands[i].Data))
		require.Equal(t, zklock.KindMutex, cands[i].Kind, "Curator LeaderSelector's nodes are lock nodes")
	}
	require.Equal(t, zklock.NodeOf(first), cands[0].Path)
	require.Equal(t, first.Token(), info.Token)
	require.True(t, info.Holds, "the leader holds")
	select {
	case r := <-second:
		t.Fatalf("b leads while a leads: %v", r.err)
	case <-time.After(200 * time.Millisecond):
	}

	require.NoError(t, es[0].Resign(ctx))
	require.ErrorIs(t, first.Err(), zklock.ErrResigned)
	requireClosed(t, first.Lost())
	require.ErrorIs(t, es[0].Resign(ctx), zklock.ErrNotLocked)
	r := <-second
	require.NoError(t, r.err)
	require.Greater(t, r.t.Token(), first.Token())
	info, err = zklock.LeaderOf(ctx, es[1])
	require.NoError(t, err)
	require.Equal(t, "b", string(info.Data), "the leader's value is the one it campaigned with")

	require.NoError(t, es[1].Resign(ctx))
	r3 := <-third
	require.NoError(t, r3.err)
	require.Greater(t, r3.t.Token(), r.t.Token())
	info, err = zklock.LeaderOf(ctx, es[0])
	require.NoError(t, err)
	require.Equal(t, "c", string(info.Data))
	require.NoError(t, es[2].Resign(ctx))
}

func requireClosed(t *testing.T, ch <-chan struct{}) {
	t.Helper()
	select {
	case <-ch:
	default:
		t.Fatal("channel not closed")
	}
}

func TestElectionSharesMutexWireFormat(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	m, err := zklock.NewMutex(newSession(t, c.Servers()), path)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	e := newElection(t, newSession(t, c.Servers()), path)
	ch := campaignAsync(ctx, e, "e")
	select {
	case r := <-ch:
		t.Fatalf("elected while a Curator-style lock- holder holds the path: %v", r.err)
	case <-time.After(500 * time.Millisecond):
	}
	require.NoError(t, m.Unlock(ctx))
	r := <-ch
	require.NoError(t, r.err)
	require.Greater(t, r.t.Token(), int64(0))
	require.NoError(t, e.Resign(ctx))
}

func TestElectionRunRequeues(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	path := lockPath(t, "e")
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	type lead struct {
		who   string
		token int64
	}
	leads := make(chan lead, 64)
	errs := make(chan error, 2)
	watcher := newSession(t, c.Servers())
	// bothQueued waits until both candidates have a node: alternation
	// holds only once the second has queued (on a loaded machine its
	// session can take longer than the first term).
	bothQueued := func(lctx context.Context) {
		for i := 0; i < 500 && lctx.Err() == nil; i++ {
			if names, _, err := watcher.Client().Children(ctx, path); err == nil && len(names) >= 2 {
				return
			}
			time.Sleep(10 * time.Millisecond)
		}
	}
	for _, who := range []string{"a", "b"} {
		e := newElection(t, newSession(t, c.Servers()), path)
		go func() {
			errs <- e.Run(runCtx, []byte(who), func(lctx context.Context, term *zklock.Term) error {
				leads <- lead{who, term.Token()}
				bothQueued(lctx)
				select { // lead briefly, then hand over
				case <-time.After(50 * time.Millisecond):
				case <-lctx.Done():
				}
				return nil
			})
		}()
	}
	var got []lead
	for len(got) < 6 {
		select {
		case l := <-leads:
			got = append(got, l)
		case <-ctx.Done():
			t.Fatalf("only %d terms: %v", len(got), got)
		}
	}
	stop()
	for i := 0; i < 2; i++ {
		require.ErrorIs(t, <-errs, context.Canceled)
	}
	for i := 1; i < len(got); i++ {
		require.Greater(t, got[i].token, got[i-1].token)
		require.NotEqual(t, got[i].who, got[i-1].who, "requeued candidates alternate: %v", got)
	}
	s := newSession(t, c.Servers())
	eventually(t, 10*time.Second, "no candidate left", func() bool { return len(children(t, s, path)) == 0 })

	// An error while leading ends Run, after resigning.
	e := newElection(t, s, path)
	boom := errors.New("boom")
	require.ErrorIs(t, e.Run(ctx, nil, func(context.Context, *zklock.Term) error { return boom }), boom)
	require.Empty(t, children(t, s, path))
}
