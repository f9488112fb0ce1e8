package zktest_test

import (
	"sync"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/stretchr/testify/require"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// waitLimit bounds every wait in these tests; the machine may be slow, and
// no test asserts that anything is fast.
const waitLimit = 60 * time.Second

// recorder keeps every session state go-zookeeper reports. Its event
// channel drops events when full, so tests use the callback instead.
type recorder struct {
	mu     sync.Mutex
	states []zk.State
	change chan struct{} // closed and replaced on every event
}

func newRecorder() *recorder { return &recorder{change: make(chan struct{})} }

func (r *recorder) callback(ev zk.Event) {
	if ev.Type != zk.EventSession {
		return
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	r.states = append(r.states, ev.State)
	close(r.change)
	r.change = make(chan struct{})
}

// count returns how many times state has been seen, and a channel closed at
// the next event.
func (r *recorder) count(state zk.State) (int, chan struct{}) {
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

// waitCount waits until state has been seen at least n times.
func (r *recorder) waitCount(t *testing.T, state zk.State, n int) {
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

type quietLogger struct{}

func (quietLogger) Printf(string, ...any) {}

// connect opens a client session on addrs and waits until it has a session.
// The connection is closed by t.Cleanup.
func connect(t *testing.T, addrs []string, timeout time.Duration) (*zk.Conn, *recorder) {
	t.Helper()
	rec := newRecorder()
	conn, _, err := zk.Connect(addrs, timeout, zk.WithEventCallback(rec.callback), zk.WithLogger(quietLogger{}))
	require.NoError(t, err)
	t.Cleanup(conn.Close)
	rec.waitCount(t, zk.StateHasSession, 1)
	return conn, rec
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

var openACL = zk.WorldACL(zk.PermAll)
