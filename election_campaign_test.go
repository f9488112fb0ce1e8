package zklock_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
)

// An Election is one candidate: while it campaigns behind another session's
// leader, a second Campaign or Run on the same handle returns
// ErrAlreadyLocked at once instead of queueing a second node (issue 23).
func TestElectionConcurrentCampaignRefused(t *testing.T) {
	t.Parallel()
	campaign := func(ctx context.Context, e *zklock.Election) error {
		_, err := e.Campaign(ctx, []byte("e"))
		return err
	}
	run := func(ctx context.Context, e *zklock.Election) error {
		return e.Run(ctx, []byte("e"), func(ctx context.Context, _ *zklock.Term) error {
			<-ctx.Done()
			return nil
		})
	}
	c := shared(t)
	for _, tc := range []struct {
		name          string
		first, second func(context.Context, *zklock.Election) error
	}{
		{"Campaign then Campaign", campaign, campaign},
		{"Campaign then Run", campaign, run},
		{"Run then Campaign", run, campaign},
		{"Run then Run", run, run},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := ctxFor(t)
			path := lockPath(t, "e")
			leader := newElection(t, newSession(t, c.Servers()), path)
			_, err := leader.Campaign(ctx, []byte("leader"))
			require.NoError(t, err)
			s := newSession(t, c.Servers())
			e := newElection(t, s, path)

			firstCtx, cancelFirst := context.WithCancel(ctx)
			defer cancelFirst()
			first := async(func() error { return tc.first(firstCtx, e) })
			eventually(t, 10*time.Second, "the first campaign queued", func() bool {
				return len(children(t, s, path)) == 2
			})

			// Bounded so that a second campaign that queues instead fails the
			// assertion below rather than hanging the test.
			secondCtx, cancelSecond := context.WithTimeout(ctx, 10*time.Second)
			defer cancelSecond()
			second := async(func() error { return tc.second(secondCtx, e) })
			require.ErrorIs(t, await(t, second, 15*time.Second, "second campaign").err, zklock.ErrAlreadyLocked)

			cands, err := zklock.ContendersOf(ctx, e)
			require.NoError(t, err)
			ours := 0
			for _, cand := range cands {
				if cand.Session == s.SessionID() {
					ours++
				}
			}
			require.Equal(t, 1, ours, "nodes of the handle in the queue: %v", cands)

			cancelFirst()
			require.ErrorIs(t, await(t, first, 10*time.Second, "first campaign").err, context.Canceled)
			require.NoError(t, leader.Resign(ctx))
			require.Empty(t, children(t, s, path), "nothing left behind")
		})
	}
}
