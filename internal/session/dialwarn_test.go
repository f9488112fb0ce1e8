package session

import (
	"context"
	"errors"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
)

// warnings keeps the WARN records a Conn logs, with their "attempts".
type warnings struct {
	mu       sync.Mutex
	attempts []int64
}

func (w *warnings) Enabled(context.Context, slog.Level) bool { return true }

func (w *warnings) Handle(_ context.Context, r slog.Record) error {
	if r.Level != slog.LevelWarn {
		return nil
	}
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "attempts" {
			w.mu.Lock()
			w.attempts = append(w.attempts, a.Value.Int64())
			w.mu.Unlock()
		}
		return true
	})
	return nil
}

func (w *warnings) WithAttrs([]slog.Attr) slog.Handler { return w }
func (w *warnings) WithGroup(string) slog.Handler      { return w }

func (w *warnings) seen() []int64 {
	w.mu.Lock()
	defer w.mu.Unlock()
	return append([]int64(nil), w.attempts...)
}

// While attempts keep failing, a Dial warns after its first interval and
// then once per interval (never per attempt), each warning counting the
// attempts so far; an interval without a new failure says nothing; after
// the first connection nothing more is said.
func TestDialWarnsOncePerIntervalWhileFailing(t *testing.T) {
	c := newEvidenceConn(t)
	c.cfg.Servers = []string{"s:1"}
	w := &warnings{}
	c.log = slog.New(w)
	c.logs.init()
	c.spawn(func() { c.logs.run(c.log, c.bg.Done()) })
	a := newDialAttempts([]string{"127.0.0.1:1"}, nil)
	a.after, a.every = 100*time.Millisecond, 300*time.Millisecond
	c.spawn(func() { c.warnWhileDialing(a) })
	state := a.observe(func(client.State, client.StateInfo) {})
	fail := func() {
		state(client.StateDisconnected, client.StateInfo{Server: "s:1", Err: errors.New("connection refused")})
	}

	// 50 attempts, 20ms apart: about 1s, past the first warning and at
	// least two intervals.
	began := time.Now()
	for range 50 {
		fail()
		time.Sleep(20 * time.Millisecond) // the attempts' pace, not a wait for a condition
	}
	// The interval under way may still warn of the last attempts.
	time.Sleep(a.every + 50*time.Millisecond)
	got := w.seen()
	intervals := 1 + int((time.Since(began)-a.after)/a.every) // the first warning, then one per interval
	t.Logf("50 failed attempts in %v: %d warnings (at most %d), counting %v", time.Since(began).Round(time.Millisecond),
		len(got), intervals, got)
	require.GreaterOrEqual(t, len(got), 2, "warnings %v", got)
	require.LessOrEqual(t, len(got), intervals, "more than one warning per interval: %v", got)
	for i := 1; i < len(got); i++ {
		require.Greater(t, got[i], got[i-1], "each warning counts the attempts so far: %v", got)
	}
	require.Equal(t, int64(50), got[len(got)-1], "the last warning counts every attempt")

	// No new failure: the next intervals pass in silence.
	n := len(got)
	time.Sleep(2 * a.every)
	require.Len(t, w.seen(), n, "a warning with no new failed attempt")

	// Connected: nothing more, whatever fails after.
	state(client.StateConnected, client.StateInfo{Server: "s:1"})
	fail()
	time.Sleep(2 * a.every)
	require.Len(t, w.seen(), n, "a warning after the first connection")
}
