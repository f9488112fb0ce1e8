package zklock_test

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// An Election candidate (Campaign, or Run) waits behind a rival leader of
// another session; its session expires on the server while it waits; the
// rival resigns later. Every term it is handed (Campaign's return, Run's
// fn entry) must be live as it is handed: the rival not leading, Lost
// open, its node standing as the session's current one.
func TestReviewElectionExpireWhileWaiting(t *testing.T) {
	t.Parallel()
	for _, useRun := range []bool{false, true} {
		t.Run(fmt.Sprintf("Run=%v", useRun), func(t *testing.T) {
			ctx, c, px, ours, obs, e, re := newElectionRig(t)
			var rivalLeads atomic.Bool
			rivalLeads.Store(true)
			var mu sync.Mutex
			var violations []string
			var terms atomic.Int32
			check := func(who string, term *zklock.Term) {
				terms.Add(1)
				var v []string
				if rivalLeads.Load() {
					v = append(v, "the rival leads")
				}
				if isClosed(term.Lost()) {
					v = append(v, "its Lost is closed")
				}
				st, ok, err := obs.Client().Exists(ctx, nodeOf(term.Guard()))
				if err == nil && (!ok || st.EphemeralOwner != ours.SessionID()) {
					v = append(v, fmt.Sprintf("its node %s does not stand as session %x's (exists %v, owner %x)", nodeOf(term.Guard()), ours.SessionID(), ok, st.EphemeralOwner))
				}
				if len(v) > 0 {
					mu.Lock()
					violations = append(violations, fmt.Sprintf("%s handed a term: %v", who, v))
					mu.Unlock()
				}
			}
			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			done := make(chan error, 1)
			go func() {
				if useRun {
					done <- e.Run(rctx, []byte("ours"), func(ctx context.Context, term *zklock.Term) error {
						check("Run", term)
						time.Sleep(100 * time.Millisecond)
						return nil
					})
					return
				}
				term, err := e.Campaign(rctx, []byte("ours"))
				if err == nil {
					check("Campaign", term)
					err = e.Resign(ctx)
				}
				done <- err
			}()
			eventually(t, 10*time.Second, "we are a candidate", func() bool { cs, err := zklock.ContendersOf(ctx, re); return err == nil && len(cs) == 2 })
			old := ours.SessionID()
			if err := zktest.ExpireSession(ctx, c, px, old); err != nil {
				t.Fatal(err)
			}
			eventually(t, 20*time.Second, "a new session", func() bool { return ours.SessionID() != old })
			eventually(t, 10*time.Second, "we are a candidate again", func() bool { cs, err := zklock.ContendersOf(ctx, re); return err == nil && len(cs) == 2 })
			time.Sleep(time.Second)
			rivalLeads.Store(false)
			if err := re.Resign(ctx); err != nil {
				t.Fatal(err)
			}
			if useRun {
				eventually(t, 10*time.Second, "Run leads", func() bool { return terms.Load() >= 3 })
				cancel()
			}
			select {
			case err := <-done:
				if err != nil && !(useRun && ctx.Err() == nil) {
					t.Errorf("ours: %v", err)
				}
			case <-time.After(20 * time.Second):
				t.Fatal("ours never returned")
			}
			if terms.Load() == 0 {
				t.Error("we never led")
			}
			eventually(t, 10*time.Second, "nothing left", func() bool { cs, err := zklock.ContendersOf(ctx, re); return err == nil && len(cs) == 0 })
			t.Logf("terms handed: %d", terms.Load())
			for _, v := range violations {
				t.Error(v)
			}
		})
	}
}

// newElectionRig is the set-up of TestReviewElectionExpireWhileWaiting, on
// the shared server: our Election e's session reaches it through px
// (ExpireSession cuts it there and reads the server's sessions, c: nothing
// faults the server); re, the rival's, of another session, leads; obs is
// an observer's session.
func newElectionRig(t *testing.T) (ctx context.Context, c *zktest.Cluster, px *zktest.Proxy, ours, obs *zklock.Session, e, re *zklock.Election) {
	t.Helper()
	t.Parallel()
	srv := shared(t)
	ctx, c, px = ctxFor(t), sharedZK.c, zktest.NewProxy(t, srv.Servers())
	ours, obs = newSession(t, px.Addrs()), newSession(t, srv.Servers())
	path := lockPath(t, "elect")
	var err error
	if e, err = zklock.NewElection(ours, path); err != nil {
		t.Fatal(err)
	}
	if re, err = zklock.NewElection(newSession(t, srv.Servers()), path); err != nil {
		t.Fatal(err)
	}
	if _, err := re.Campaign(ctx, []byte("rival")); err != nil {
		t.Fatal(err)
	}
	return ctx, c, px, ours, obs, e, re
}
