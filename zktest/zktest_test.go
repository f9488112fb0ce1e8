package zktest_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait in these tests; the machine may be slow, and
// no test asserts that anything is fast.
const waitLimit = 60 * time.Second

// recorder keeps every state the client reports (its OnState hook), and
// the server of the last connection.
type recorder struct {
	mu     sync.Mutex
	states []client.State
	server string        // of the last StateConnected
	change chan struct{} // closed and replaced on every state
}

func newRecorder() *recorder { return &recorder{change: make(chan struct{})} }

func (r *recorder) on(st client.State, info client.StateInfo) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, st)
	if st == client.StateConnected {
		r.server = info.Server
	}
	close(r.change)
	r.change = make(chan struct{})
}

// count returns how many times state has been seen, and a channel closed at
// the next state.
func (r *recorder) count(state client.State) (int, chan struct{}) {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, s := range r.states {
		if s == state {
			n++
		}
	}
	return n, r.change
}

// lastServer returns the server the client last connected to.
func (r *recorder) lastServer() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.server
}

// waitCount waits until state has been seen at least n times.
func (r *recorder) waitCount(t *testing.T, state client.State, n int) {
	t.Helper()
	deadline := time.After(waitLimit)
	for {
		seen, change := r.count(state)
		if seen >= n {
			return
		}
		select {
		case <-change:
		case <-deadline:
			t.Fatalf("state %v seen %d times after %v, want %d", state, seen, waitLimit, n)
		}
	}
}

// connect opens a client session on addrs (zklock's own client) and waits
// until it has a session. The client is closed by t.Cleanup.
func connect(t *testing.T, addrs []string, timeout time.Duration) (*client.Client, *recorder) {
	t.Helper()
	return dial(t, client.Config{Servers: addrs, Timeout: timeout})
}

// dial is connect with cfg.
func dial(t *testing.T, cfg client.Config) (*client.Client, *recorder) {
	t.Helper()
	rec := newRecorder()
	cfg.OnState = rec.on
	ctx, cancel := context.WithTimeout(context.Background(), waitLimit)
	defer cancel()
	conn, err := client.Dial(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close() })
	return conn, rec
}

// reqCtx bounds one request of a test: a request made while the client is
// disconnected waits for a connection.
func reqCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(t.Context(), waitLimit)
	t.Cleanup(cancel)
	return ctx
}

// eventually retries f every 100ms until it returns nil, for at most waitLimit.
func eventually(t *testing.T, what string, f func() error) {
	t.Helper()
	deadline := time.Now().Add(waitLimit)
	for {
		err := f()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: still failing after %v: %v", what, waitLimit, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

var openACL = client.WorldACL(client.PermAll)
