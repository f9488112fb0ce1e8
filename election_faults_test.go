package zklock_test

import (
	"context"
	"math/rand"
	"slices"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// fault is one injected fault: injected and healed bound the fault itself,
// recovered is when a leader was seen again after healed.
type fault struct {
	kind                        faultKind
	victim                      int  // candidate, or ZooKeeper server for killZKLeader
	deposed                     bool // the victim was the leading candidate
	injected, healed, recovered time.Time
}

// inject runs random faults for d, one at a time, each followed by a check
// that a leader exists again within the session timeout plus
// propRecoveryBound.
func (w *propCluster) inject(t *testing.T, ctx context.Context, rng *rand.Rand, rec *recorder, d time.Duration) []fault {
	var faults []fault
	end := time.Now().Add(d)
	for time.Now().Before(end) && len(faults) < propMaxFaults && !t.Failed() {
		f := fault{kind: faultKind(rng.Intn(int(numFaultKinds)))}
		f.injected = time.Now()
		leader := rec.leader()
		switch f.kind {
		case killZKLeader:
			f.victim = w.killZKLeader(t, ctx, rng)
		case cutOff:
			f.victim = w.cutOff(t, ctx, rng, rec)
		case pause:
			f.victim = w.pause(rng, rec)
		case freezeZK:
			f.victim = w.freezeZK(t, rng)
		}
		f.healed = time.Now()
		f.deposed = (f.kind == cutOff || f.kind == pause) && f.victim == leader
		f.recovered = awaitLeader(t, rec, f)
		faults = append(faults, f)
		time.Sleep(time.Duration(300+rng.Intn(1200)) * time.Millisecond)
	}
	return faults
}

// victim picks the leading candidate two times in three, else any.
func victim(rng *rand.Rand, rec *recorder) int {
	if l := rec.leader(); l >= 0 && rng.Intn(3) > 0 {
		return l
	}
	return rng.Intn(propCandidates)
}

func (w *propCluster) killZKLeader(t *testing.T, ctx context.Context, rng *rand.Rand) int {
	wctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	require.NoError(t, w.c.WaitReady(wctx))
	i, err := w.c.Leader(wctx)
	require.NoError(t, err)
	require.NoError(t, w.c.Server(i).Kill())
	time.Sleep(time.Duration(200+rng.Intn(1800)) * time.Millisecond)
	require.NoError(t, w.c.Server(i).Start())
	return i
}

func (w *propCluster) cutOff(t *testing.T, ctx context.Context, rng *rand.Rand, rec *recorder) int {
	v := victim(rng, rec)
	sid := w.sessions[v].Client().SessionID()
	w.proxies[v].Blackhole()
	defer w.proxies[v].Heal()
	require.NoError(t, w.c.WaitSessionExpired(ctx, sid))
	return v
}

func (w *propCluster) pause(rng *rand.Rand, rec *recorder) int {
	v := victim(rng, rec)
	w.proxies[v].Blackhole()
	// From a quarter to nine tenths of the timeout: the longer ones pass the
	// ownership deadline (timeout minus a fifth) without expiring the session.
	time.Sleep(propSessionTimeout/4 + time.Duration(rng.Int63n(int64(propSessionTimeout*13/20))))
	w.proxies[v].Heal()
	return v
}

// freezeZK pauses a random server for 0.3 to 2.5s: past the ensemble's
// syncLimit (1.5s) a paused leader server is replaced, and clients of the
// paused server pass their ownership deadline and move elsewhere.
func (w *propCluster) freezeZK(t *testing.T, rng *rand.Rand) int {
	i := rng.Intn(w.c.Len())
	require.NoError(t, w.c.Server(i).Pause())
	time.Sleep(time.Duration(300+rng.Intn(2200)) * time.Millisecond)
	require.NoError(t, w.c.Server(i).Resume())
	return i
}

// awaitLeader waits until some candidate leads, failing the test after the
// session timeout plus propRecoveryBound.
func awaitLeader(t *testing.T, rec *recorder, f fault) time.Time {
	limit := propSessionTimeout + propRecoveryBound
	for deadline := time.Now().Add(limit); rec.leader() < 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Errorf("no leader within %v of healing %s (victim %d)", limit, faultNames[f.kind], f.victim)
			return time.Now()
		}
	}
	return time.Now()
}

// checkTerms judges the recorded terms: all ended, tokens strictly
// increasing in order of start, and no term starting before every earlier
// one ended (two candidates believing they led at once).
func checkTerms(t *testing.T, terms []term) {
	t.Helper()
	sorted := slices.Clone(terms)
	slices.SortFunc(sorted, func(a, b term) int { return a.start.Compare(b.start) })
	violations := 0
	var lastEnd time.Time
	for i, tm := range sorted {
		require.True(t, tm.ended, "term %d (candidate %d) never ended", i, tm.cand)
		if i > 0 && tm.token <= sorted[i-1].token {
			t.Errorf("token %d of term %d (candidate %d) is not above %d", tm.token, i, tm.cand, sorted[i-1].token)
			violations++
		}
		if i > 0 && tm.start.Before(lastEnd) {
			t.Errorf("double leader: candidate %d led from %v while an earlier term ran until %v",
				tm.cand, tm.start.Format(time.StampMicro), lastEnd.Format(time.StampMicro))
			violations++
		}
		if tm.end.After(lastEnd) {
			lastEnd = tm.end
		}
	}
	t.Logf("judged %d terms: %d violations", len(terms), violations)
}

// reportFailover logs, per fault kind, how long the election was without a
// leader around each fault (the longest leaderless stretch between the
// injection and the recovery) and how long recovery took after healing;
// and, for a leader cut off past its session timeout, how long until
// another candidate led.
func reportFailover(t *testing.T, faults []fault, terms []term) {
	gaps := map[faultKind][]time.Duration{}
	recov := map[faultKind][]time.Duration{}
	var takeover []time.Duration
	for _, f := range faults {
		gaps[f.kind] = append(gaps[f.kind], longestGap(terms, f.injected, f.recovered))
		recov[f.kind] = append(recov[f.kind], f.recovered.Sub(f.healed))
		if f.kind == cutOff && f.deposed {
			takeover = append(takeover, nextTerm(terms, f.victim, f.injected))
		}
	}
	t.Logf("recovery bound: session timeout %v + %v", propSessionTimeout, propRecoveryBound)
	for k := faultKind(0); k < numFaultKinds; k++ {
		g, r := gaps[k], recov[k]
		if len(g) == 0 {
			continue
		}
		t.Logf("%-21s n=%-3d leaderless: median %v max %v; leader after heal: median %v max %v",
			faultNames[k], len(g), median(g), slices.Max(g).Round(time.Millisecond), median(r), slices.Max(r).Round(time.Millisecond))
	}
	if len(takeover) > 0 {
		t.Logf("leader cut off: another candidate led after median %v max %v (n=%d)",
			median(takeover), slices.Max(takeover).Round(time.Millisecond), len(takeover))
	}
}

// nextTerm returns how long after from a candidate other than cand began a
// term.
func nextTerm(terms []term, cand int, from time.Time) time.Duration {
	var first time.Time
	for _, tm := range terms {
		if tm.cand != cand && tm.start.After(from) && (first.IsZero() || tm.start.Before(first)) {
			first = tm.start
		}
	}
	if first.IsZero() {
		return 0
	}
	return first.Sub(from)
}

func median(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2].Round(time.Millisecond)
}

// longestGap returns the longest stretch within [from, to] covered by no
// term.
func longestGap(terms []term, from, to time.Time) time.Duration {
	var longest time.Duration
	for cur := from; cur.Before(to); {
		covered := cur
		for _, tm := range terms {
			if !tm.start.After(cur) && tm.end.After(covered) {
				covered = tm.end
			}
		}
		if covered.After(cur) {
			cur = covered
			continue
		}
		next := to
		for _, tm := range terms {
			if tm.start.After(cur) && tm.start.Before(next) {
				next = tm.start
			}
		}
		longest = max(longest, next.Sub(cur))
		cur = next
	}
	return longest
}
