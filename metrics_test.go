package zklock_test

import (
	"bytes"
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// metricsCall is one Metrics call as recorded.
type metricsCall struct {
	method, path string
	kind         zklock.Kind
	d            time.Duration
	err          error
	state        zk.State
}

// metricsRecorder is a Metrics that records every call.
type metricsRecorder struct {
	mu    sync.Mutex
	calls []metricsCall
}

var _ zklock.Metrics = (*metricsRecorder)(nil)

func (r *metricsRecorder) add(c metricsCall) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.calls = append(r.calls, c)
}

func (r *metricsRecorder) AcquireWait(kind zklock.Kind, path string, d time.Duration, err error) {
	r.add(metricsCall{method: "AcquireWait", kind: kind, path: path, d: d, err: err})
}
func (r *metricsRecorder) Hold(kind zklock.Kind, path string, d time.Duration) {
	r.add(metricsCall{method: "Hold", kind: kind, path: path, d: d})
}
func (r *metricsRecorder) Loss(kind zklock.Kind, path string) {
	r.add(metricsCall{method: "Loss", kind: kind, path: path})
}
func (r *metricsRecorder) SessionState(st zk.State) {
	r.add(metricsCall{method: "SessionState", state: st})
}

// Revoked and Expired are not recorded: the tests of the recipes' events
// are the adapters' (metrics/...) and ExampleMetrics_revocations.
func (r *metricsRecorder) Revoked(kind zklock.Kind, path string) {}
func (r *metricsRecorder) Expired(kind zklock.Kind, path string) {}

// take returns the calls so far, except SessionState's, and forgets them.
func (r *metricsRecorder) take() []metricsCall {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out, keep []metricsCall
	for _, c := range r.calls {
		if c.method != "SessionState" {
			out = append(out, c)
		} else {
			keep = append(keep, c)
		}
	}
	r.calls = keep
	return out
}

func (r *metricsRecorder) states() []zk.State {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []zk.State
	for _, c := range r.calls {
		if c.method == "SessionState" {
			out = append(out, c.state)
		}
	}
	return out
}

// requireCalls checks methods, kinds, paths and errors (with errors.Is) of
// got against want; durations only for being non-negative.
func requireCalls(t *testing.T, want, got []metricsCall) {
	t.Helper()
	require.Len(t, got, len(want), "calls: %+v", got)
	for i, w := range want {
		g := got[i]
		require.Equal(t, w.method+" "+string(w.kind)+" "+w.path, g.method+" "+string(g.kind)+" "+g.path, "metricsCall %d: %+v", i, got)
		require.GreaterOrEqual(t, g.d, time.Duration(0))
		if w.err == nil {
			require.NoError(t, g.err, "metricsCall %d", i)
		} else {
			require.ErrorIs(t, g.err, w.err, "metricsCall %d", i)
		}
	}
}

func TestMetricsEveryPrimitive(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	rec := &metricsRecorder{}
	s := newSession(t, c.Servers(), zklock.WithMetrics(rec))
	other := newSession(t, c.Servers())
	root := lockPath(t, "")

	m, err := zklock.NewMutex(s, root+"m")
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	require.NoError(t, m.Unlock(ctx))
	theirs, err := zklock.NewMutex(other, root+"m")
	require.NoError(t, err)
	require.NoError(t, theirs.Lock(ctx))
	require.ErrorIs(t, m.TryLock(ctx), zklock.ErrLocked)
	tctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	require.ErrorIs(t, m.Lock(tctx), context.DeadlineExceeded)
	cancel()
	require.NoError(t, theirs.Unlock(ctx))
	requireCalls(t, []metricsCall{
		{method: "AcquireWait", kind: zklock.KindMutex, path: root + "m"},
		{method: "Hold", kind: zklock.KindMutex, path: root + "m"},
		{method: "AcquireWait", kind: zklock.KindMutex, path: root + "m", err: zklock.ErrLocked},
		{method: "AcquireWait", kind: zklock.KindMutex, path: root + "m", err: context.DeadlineExceeded},
	}, rec.take())

	r, err := zklock.NewReentrantMutex(s, root+"r")
	require.NoError(t, err)
	require.NoError(t, r.Lock(ctx))
	require.NoError(t, r.Lock(ctx)) // a count, not an acquisition
	require.NoError(t, r.Unlock(ctx))
	require.NoError(t, r.Unlock(ctx))
	rw, err := zklock.NewRWMutex(s, root+"rw")
	require.NoError(t, err)
	require.NoError(t, rw.Lock(ctx))
	require.NoError(t, rw.Downgrade(ctx))
	require.NoError(t, rw.Unlock(ctx))
	require.NoError(t, rw.RUnlock(ctx))
	requireCalls(t, []metricsCall{
		{method: "AcquireWait", kind: zklock.KindReentrantMutex, path: root + "r"},
		{method: "Hold", kind: zklock.KindReentrantMutex, path: root + "r"},
		{method: "AcquireWait", kind: zklock.KindRWMutexWrite, path: root + "rw"},
		{method: "AcquireWait", kind: zklock.KindRWMutexRead, path: root + "rw"},
		{method: "Hold", kind: zklock.KindRWMutexWrite, path: root + "rw"},
		{method: "Hold", kind: zklock.KindRWMutexRead, path: root + "rw"},
	}, rec.take())

	sem, err := zklock.NewSemaphore(s, root+"sem", 2)
	require.NoError(t, err)
	lease, err := sem.Acquire(ctx, 2)
	require.NoError(t, err)
	_, err = sem.TryAcquire(ctx, 1)
	require.ErrorIs(t, err, zklock.ErrLocked)
	require.NoError(t, lease.Release(ctx))
	e, err := zklock.NewElection(s, root+"e")
	require.NoError(t, err)
	_, err = e.Campaign(ctx, nil)
	require.NoError(t, err)
	require.NoError(t, e.Resign(ctx))
	requireCalls(t, []metricsCall{
		{method: "AcquireWait", kind: zklock.KindSemaphore, path: root + "sem"},
		{method: "AcquireWait", kind: zklock.KindSemaphore, path: root + "sem", err: zklock.ErrLocked},
		{method: "Hold", kind: zklock.KindSemaphore, path: root + "sem"},
		{method: "AcquireWait", kind: zklock.KindElection, path: root + "e"},
		{method: "Hold", kind: zklock.KindElection, path: root + "e"},
	}, rec.take())

	// Closing while holding reports the hold, not a loss.
	require.NoError(t, m.Lock(ctx))
	require.NoError(t, s.Close())
	requireCalls(t, []metricsCall{
		{method: "AcquireWait", kind: zklock.KindMutex, path: root + "m"},
		{method: "Hold", kind: zklock.KindMutex, path: root + "m"},
	}, rec.take())
	require.Equal(t, []zk.State{zk.StateConnected, zk.StateClosed}, rec.states())
}

// syncBuffer is a bytes.Buffer safe for the logger's concurrent writes.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

// records returns the JSON log records with message msg.
func (b *syncBuffer) records(t *testing.T, msg string) []map[string]any {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []map[string]any
	for _, line := range strings.Split(strings.TrimSpace(b.b.String()), "\n") {
		var r map[string]any
		require.NoError(t, json.Unmarshal([]byte(line), &r), line)
		if r["msg"] == msg {
			out = append(out, r)
		}
	}
	return out
}

// TestMetricsLossIsReportedAndLogged: when the session expires under a
// held lock, Metrics gets Loss and Hold (once: the Unlock that follows adds
// nothing), the log names the lock's path, and the states are reported in
// order.
func TestMetricsLossIsReportedAndLogged(t *testing.T) {
	t.Parallel()
	c := shared(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	rec := &metricsRecorder{}
	var logs syncBuffer
	logger := slog.New(slog.NewJSONHandler(&logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	s := newSession(t, p.Addrs(), zklock.WithMetrics(rec), zklock.WithLogger(logger))
	lp := lockPath(t, "lock")
	m, err := zklock.NewMutex(s, lp)
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	node := zklock.NodeOf(m)
	rec.take()

	require.NoError(t, c.ExpireSession(ctx, p, s.Client().SessionID()))
	<-m.Lost()
	eventually(t, 30*time.Second, "Loss reported", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		for _, c := range rec.calls {
			if c.method == "Hold" {
				return true
			}
		}
		return false
	})
	require.ErrorIs(t, m.Unlock(ctx), zklock.ErrLockLost)
	requireCalls(t, []metricsCall{
		{method: "Loss", kind: zklock.KindMutex, path: lp},
		{method: "Hold", kind: zklock.KindMutex, path: lp},
	}, rec.take())

	lost := logs.records(t, "zklock: lock lost")
	require.Len(t, lost, 1)
	require.Equal(t, lp, lost[0]["path"])
	require.Equal(t, node, lost[0]["node"])
	require.Equal(t, "WARN", lost[0]["level"])

	eventually(t, 30*time.Second, "a new session", func() bool { return s.Client().State() == zk.StateConnected })
	require.NoError(t, s.Close())
	states := rec.states()
	require.Equal(t, zk.StateClosed, states[len(states)-1], "states: %v", states)
	require.Contains(t, states, zk.StateLost)
	require.Contains(t, states, zk.StateExpired)
}
