package zklock_test

import (
	"context"
	"math/rand"
	"os"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// Property test knobs. The fault phase lasts propDefaultDuration unless
// ZKLOCK_ELECTION_DURATION (a Go duration, e.g. "10m") says otherwise;
// ZKLOCK_ELECTION_SEED replays a run.
const (
	propCandidates      = 5
	propDefaultDuration = 60 * time.Second
	propSessionTimeout  = 3 * time.Second
	// propRecoveryBound is the slack, beyond the session timeout, within
	// which a leader must exist again after a fault heals. It covers a new
	// ZooKeeper leader election, reconnecting, a few round trips and a loaded
	// two-core machine.
	propRecoveryBound = 10 * time.Second
	propMaxFaults     = 1000
)

type faultKind int

const (
	killZKLeader faultKind = iota // the ensemble's leader server is killed, then restarted
	cutOff                        // a candidate is partitioned until its session expires
	pause                         // a candidate is partitioned for less than the timeout
	freezeZK                      // a ZooKeeper server is paused (SIGSTOP), like a long GC pause
	numFaultKinds
)

var faultNames = [...]string{"kill-zk-leader", "cut-off-past-timeout", "pause-below-timeout", "freeze-zk-server"}

// term is one recorded term: from Campaign's return to its loss signal or
// the decision to resign.
type term struct {
	cand       int
	token      int64
	start, end time.Time
	ended      bool
	lost       bool
}

// recorder is the observer of every term, shared by the candidates.
type recorder struct {
	mu    sync.Mutex
	terms []term
	errs  []string
}

func (r *recorder) begin(cand int, token int64) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.terms = append(r.terms, term{cand: cand, token: token, start: time.Now()})
	return len(r.terms) - 1
}

func (r *recorder) finish(i int, lost bool) {
	now := time.Now()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.terms[i].end, r.terms[i].ended, r.terms[i].lost = now, true, lost
}

// leader returns the candidate whose term is running, or -1.
func (r *recorder) leader() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	for i := len(r.terms) - 1; i >= 0; i-- {
		if !r.terms[i].ended {
			return r.terms[i].cand
		}
	}
	return -1
}

func (r *recorder) fail(msg string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.errs) < 20 {
		r.errs = append(r.errs, msg)
	}
}

// candidate campaigns until ctx ends, leading each term for a random while.
func candidate(ctx context.Context, e *zklock.Election, i int, seed int64, rec *recorder) {
	rng := rand.New(rand.NewSource(seed))
	lead := func(lctx context.Context, t *zklock.Term) error {
		idx := rec.begin(i, t.Token())
		hold := time.NewTimer(time.Duration(300+rng.Intn(3700)) * time.Millisecond)
		defer hold.Stop()
		select {
		case <-t.Lost():
			rec.finish(idx, true)
		case <-hold.C:
			rec.finish(idx, false)
		case <-lctx.Done(): // the test is ending
			rec.finish(idx, false)
		}
		return nil
	}
	for attempt := 0; ctx.Err() == nil && attempt < 100; attempt++ {
		err := e.Run(ctx, []byte("candidate-"+strconv.Itoa(i)), lead)
		if ctx.Err() == nil {
			rec.fail("candidate " + strconv.Itoa(i) + ": Run: " + err.Error())
		}
	}
}

func envDuration(t *testing.T, name string, def time.Duration) time.Duration {
	v := os.Getenv(name)
	if v == "" {
		return def
	}
	d, err := time.ParseDuration(v)
	require.NoError(t, err, "%s", name)
	return d
}

func envSeed(t *testing.T) int64 {
	v := os.Getenv("ZKLOCK_ELECTION_SEED")
	if v == "" {
		return time.Now().UnixNano()
	}
	seed, err := strconv.ParseInt(v, 10, 64)
	require.NoError(t, err, "ZKLOCK_ELECTION_SEED")
	return seed
}

// propCluster is the world of the property test: an ensemble and one proxy
// and session per candidate.
type propCluster struct {
	c        *zktest.Cluster
	proxies  []*zktest.Proxy
	sessions []*zklock.Session
}

// TestElectionPropertyNoDoubleLeaderUnderFaults runs five candidates, each
// on its own session behind its own proxy to a 3-server ensemble, through
// seeded random faults, one at a time: the ZooKeeper leader killed and
// restarted, a candidate partitioned until its session expires, a candidate
// partitioned for less than the session timeout, a server frozen. Each
// candidate leads for a random while and campaigns again (Run). Judged
// afterwards: tokens strictly increase in order of term start, no term
// starts before every earlier term ended at its loss signal or resignation,
// Observe reported leaders in token order, and after each fault healed a
// leader existed again within the session timeout plus propRecoveryBound.
func TestElectionPropertyNoDoubleLeaderUnderFaults(t *testing.T) {
	t.Parallel()
	duration := envDuration(t, "ZKLOCK_ELECTION_DURATION", propDefaultDuration)
	seed := envSeed(t)
	t.Logf("seed %d (ZKLOCK_ELECTION_SEED), fault phase %v (ZKLOCK_ELECTION_DURATION)", seed, duration)
	rng := rand.New(rand.NewSource(seed))

	c := zktest.StartEnsemble(t, 3, zktest.WithSessionTimeouts(200*time.Millisecond, propSessionTimeout))
	w := &propCluster{c: c}
	path := lockPath(t, "leader")
	ctx, cancel := context.WithTimeout(context.Background(), duration+5*time.Minute)
	defer cancel()
	runCtx, stop := context.WithCancel(ctx)
	defer stop()
	rec := &recorder{}
	var wg sync.WaitGroup
	for i := 0; i < propCandidates; i++ {
		p := zktest.NewProxy(t, c.Servers())
		s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(propSessionTimeout))
		w.proxies, w.sessions = append(w.proxies, p), append(w.sessions, s)
		e := newElection(t, s, path)
		wg.Add(1)
		go func() {
			defer wg.Done()
			candidate(runCtx, e, i, rng.Int63(), rec)
		}()
	}
	observed := observeTokens(t, runCtx, newSession(t, c.Servers(), zklock.WithSessionTimeout(propSessionTimeout)), path)

	faults := w.inject(t, ctx, rng, rec, duration)
	stop()
	waitGroup(t, &wg, 30*time.Second)
	tokens := <-observed

	rec.mu.Lock()
	defer rec.mu.Unlock()
	checkTerms(t, rec.terms)
	require.True(t, slices.IsSorted(tokens), "Observe reported leaders out of order: %v", tokens)
	reportFailover(t, faults, rec.terms)
	t.Logf("%d terms, %d faults, %d Observe changes, %d candidate errors: %v",
		len(rec.terms), len(faults), len(tokens), len(rec.errs), rec.errs)
}

func waitGroup(t *testing.T, wg *sync.WaitGroup, d time.Duration) {
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(d):
		t.Fatalf("candidates did not stop within %v", d)
	}
}

// observeTokens records the token of every leader Observe reports, until
// ctx ends; the list arrives on the returned channel.
func observeTokens(t *testing.T, ctx context.Context, s *zklock.Session, path string) <-chan []int64 {
	ch, err := newElection(t, s, path).Observe(ctx)
	require.NoError(t, err)
	out := make(chan []int64, 1)
	go func() {
		var tokens []int64
		for info := range ch {
			if info.Node != "" {
				tokens = append(tokens, info.Token)
			}
		}
		out <- tokens
	}()
	return out
}
