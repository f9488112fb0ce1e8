package session

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
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

// The Dial gives up only when every server's latest attempt said it is
// not ZooKeeper: in its own answer, or, for a silent attempt, in the
// probe's "HTTP/" since; a server that fails otherwise (refused: it may
// be coming up) keeps it trying and loses what it was found to be.
func TestDialGivesUpOnlyWhenNoServerMayBeZooKeeper(t *testing.T) {
	text := &client.NotZooKeeperError{Head: "HTTP"}
	timeout := os.ErrDeadlineExceeded
	refused := errors.New("connection refused")
	type step struct {
		server string
		err    error // nil: the probe of server found an HTTP server
	}
	for name, tc := range map[string]struct {
		steps  []step
		giveUp bool
	}{
		"both answered in text":            {[]step{{"a:1", text}, {"b:1", text}}, true},
		"one answered, one refused":        {[]step{{"a:1", text}, {"b:1", refused}}, false},
		"one answered, the other not yet":  {[]step{{"a:1", text}}, false},
		"text, then refused":               {[]step{{"a:1", text}, {"a:1", refused}, {"b:1", text}}, false},
		"silent, probed HTTP":              {[]step{{"a:1", timeout}, {"a:1", nil}, {"b:1", text}}, true},
		"silent, not probed":               {[]step{{"a:1", timeout}, {"b:1", text}}, false},
		"probed HTTP, silent again":        {[]step{{"b:1", text}, {"a:1", timeout}, {"a:1", nil}, {"a:1", timeout}}, true},
		"probed HTTP, then refused":        {[]step{{"a:1", timeout}, {"a:1", refused}, {"a:1", nil}, {"b:1", text}}, false},
		"a probe answered after a connect": {[]step{{"a:1", timeout}, {"", nil}, {"a:1", nil}, {"b:1", text}}, false},
	} {
		t.Run(name, func(t *testing.T) {
			var gaveUp []error
			probed := map[string]int{}
			a := newDialAttempts([]string{"a:1", "b:1", "a:1"}, func(err error) { gaveUp = append(gaveUp, err) })
			a.probe = func(addr string) { probed[addr]++ }
			state := a.observe(func(client.State, client.StateInfo) {})
			for _, s := range tc.steps {
				switch {
				case s.server == "":
					state(client.StateConnected, client.StateInfo{Server: "a:1"})
				case s.err == nil:
					a.identified(s.server, &client.NotZooKeeperError{Head: "HTTP"})
				default:
					state(client.StateDisconnected, client.StateInfo{Server: s.server, Err: s.err})
				}
			}
			if !tc.giveUp {
				require.Empty(t, gaveUp)
				return
			}
			require.Len(t, gaveUp, 1)
			require.ErrorIs(t, gaveUp[0], errs.ErrNotZooKeeper)
			require.Equal(t, `zklock: connect to a:1,b:1: no server is a ZooKeeper client port: a:1 answered "HTTP…", b:1 answered "HTTP…"`,
				gaveUp[0].Error())
			for addr, n := range probed {
				require.Equal(t, 1, n, "%s probed %d times", addr, n)
			}
		})
	}
}
