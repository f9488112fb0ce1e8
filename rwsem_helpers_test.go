package zklock_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// manySessions opens n sessions on addrs.
func manySessions(t *testing.T, addrs []string, n int, opts ...zklock.SessionOption) []*zklock.Session {
	t.Helper()
	out := make([]*zklock.Session, n)
	for i := range out {
		out[i] = newSession(t, addrs, opts...)
	}
	return out
}

// nodeNames returns the children of path, none if it does not exist.
func nodeNames(t testing.TB, s *zklock.Session, path string) []string {
	t.Helper()
	names, _, err := s.Client().Children(t.Context(), path)
	if errors.Is(err, zk.ErrNoNode) {
		return nil
	}
	require.NoError(t, err)
	return names
}

// packets returns the requests the servers of c have received so far.
func packets(t testing.TB, c *zktest.Cluster) int64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n, err := c.MntrSum(ctx, "zk_packets_received")
	require.NoError(t, err)
	return n
}

// awaitWatches waits until the servers of c hold at least n watches
// (zktest's WatchCount: one per watched path and session, a child watch
// apart), failing the test after 20s. A herd test waits for it before it
// counts the requests a release causes: a waiter whose watch is not set
// yet would wake late or not at all, and a herd would go uncounted. Each
// poll is a four-letter command, which zk_packets_received counts, so a
// test must not poll while it counts.
func awaitWatches(t *testing.T, c *zktest.Cluster, n int64) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	var got int64
	for {
		var err error
		if got, err = c.WatchCount(ctx); err == nil && got >= n {
			return
		}
		select {
		case <-ctx.Done():
			t.Fatalf("the servers hold %d watches after 20s, want %d (last error %v)", got, n, err)
		case <-time.After(20 * time.Millisecond):
		}
	}
}

// result is the outcome of an asynchronous acquisition.
type result struct {
	at  time.Time
	err error
}

// async runs f on a goroutine and delivers its outcome.
func async(f func() error) <-chan result {
	ch := make(chan result, 1)
	go func() {
		err := f()
		ch <- result{time.Now(), err}
	}()
	return ch
}

// pending fails the test if ch delivers within d.
func pending(t *testing.T, ch <-chan result, d time.Duration, what string) {
	t.Helper()
	select {
	case r := <-ch:
		t.Fatalf("%s: returned early (err %v)", what, r.err)
	case <-time.After(d):
	}
}

// await returns ch's outcome, failing the test after d.
func await(t *testing.T, ch <-chan result, d time.Duration, what string) result {
	t.Helper()
	select {
	case r := <-ch:
		return r
	case <-time.After(d):
		t.Fatalf("%s: not within %v", what, d)
		return result{}
	}
}

// herdServer starts a server that grants long sessions, and opens n
// sessions of ten minutes on it: their pings (requests too) then come every
// 200s, so they barely disturb request counts.
func herdServer(t *testing.T, n int) (*zktest.Cluster, []*zklock.Session) {
	t.Helper()
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Minute))
	return c, manySessions(t, c.Servers(), n, zklock.WithSessionTimeout(10*time.Minute))
}

// herdWindow is how long the herd checks count server requests after a
// release, and over an idle stretch for the baseline.
const herdWindow = 1500 * time.Millisecond

// requestsUntil counts the requests the servers receive while f runs,
// until they hold at least settled watches again (polled every 20ms for
// 20s at most) and for the rest of herdWindow, minus those of an idle
// herdWindow before it (pings) and minus the polls themselves (a
// four-letter command counts as a packet): so the figure is what f caused,
// up to the moment the clients it disturbed have set their watches again.
func requestsUntil(t *testing.T, c *zktest.Cluster, f func(), settled int64) (caused, idle int64) {
	t.Helper()
	ctx := ctxFor(t)
	p0 := packets(t, c)
	time.Sleep(herdWindow)
	p1 := packets(t, c)
	start := time.Now()
	f()
	var polls int64
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		n, err := c.WatchCount(ctx)
		require.NoError(t, err)
		polls += int64(c.Len())
		if n >= settled {
			break
		}
		require.True(t, time.Now().Before(deadline), "%d watches 20s after the release, want %d", n, settled)
	}
	time.Sleep(herdWindow - time.Since(start))
	p2 := packets(t, c)
	idle = p1 - p0
	return p2 - p1 - idle - polls, idle
}

// runAll runs f(ctx, 0..n-1) on n goroutines and returns the first error;
// an error cancels the ctx the others see.
func runAll(ctx context.Context, n int, f func(context.Context, int) error) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	var wg sync.WaitGroup
	var once sync.Once
	var first error
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := f(ctx, i); err != nil {
				once.Do(func() { first = err; cancel() })
			}
		}()
	}
	wg.Wait()
	return first
}

// receive returns the next value from ch, failing the test after d.
func receive[T any](t *testing.T, ch <-chan T, d time.Duration) T {
	t.Helper()
	select {
	case v := <-ch:
		return v
	case <-time.After(d):
		t.Fatalf("nothing received within %v", d)
		var zero T
		return zero
	}
}

// ownedBy returns the children of dirs (full paths) whose ephemeral owner
// is session sid: what a client left behind there.
func ownedBy(t testing.TB, s *zklock.Session, sid int64, dirs ...string) []string {
	t.Helper()
	var out []string
	for _, dir := range dirs {
		for _, name := range nodeNames(t, s, dir) {
			_, st, err := s.Client().Get(t.Context(), dir+"/"+name)
			if errors.Is(err, zk.ErrNoNode) {
				continue
			}
			require.NoError(t, err)
			if st.EphemeralOwner == sid {
				out = append(out, dir+"/"+name)
			}
		}
	}
	return out
}
