package session

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock/internal/client"
)

// scriptedTimeout is the session timeout of the scripted tests: the
// deadline is 1.6s after its anchor (the margin is a fifth).
const scriptedTimeout = 2 * time.Second

// transition is a session state reported to Config.OnState.
type transition struct {
	st  State
	sid int64
}

func (tr transition) String() string { return fmt.Sprintf("%v 0x%x", tr.st, tr.sid) }

// states records a Conn's transitions, for tests to wait on.
type states struct {
	mu      sync.Mutex
	seen    []transition
	changed chan struct{}
}

func (s *states) add(st State, sid int64, _ time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seen = append(s.seen, transition{st, sid})
	close(s.changed)
	s.changed = make(chan struct{})
}

// await waits, at most 10s, until st has been reported n times in all.
func (s *states) await(t *testing.T, st State, n int) transition {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	for {
		s.mu.Lock()
		var last transition
		k := 0
		for _, tr := range s.seen {
			if tr.st == st {
				k, last = k+1, tr
			}
		}
		changed := s.changed
		s.mu.Unlock()
		if k >= n {
			return last
		}
		select {
		case <-changed:
		case <-timer.C:
			t.Fatalf("timed out waiting for state %v (#%d); seen %v", st, n, s.list())
		}
	}
}

func (s *states) list() []transition {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]transition(nil), s.seen...)
}

// dialScripted dials a Conn to the scripted servers with a 2s session.
func dialScripted(t *testing.T, srvs ...*zkServer) (*Conn, *states) {
	t.Helper()
	sts := &states{changed: make(chan struct{})}
	cfg := Config{
		Timeout: scriptedTimeout,
		Logger:  slog.New(slog.DiscardHandler),
		ACL:     client.WorldACL(client.PermAll),
		Backoff: func() backoff.BackOff { return backoff.NewConstantBackOff(10 * time.Millisecond) },
		Timing:  Timing{Tick: 100 * time.Millisecond, SyncLimit: 5},
		OnState: sts.add,
	}
	for _, s := range srvs {
		cfg.Servers = append(cfg.Servers, s.addr())
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := Dial(ctx, cfg)
	require.NoError(t, err)
	t.Cleanup(c.Close)
	return c, sts
}

// awaitDirect waits until the connection's server is confirmed a leader or
// standalone ('srvr', then a reply to a later request): its replies then
// prove the leader's clock at their send time.
func awaitDirect(t *testing.T, c *Conn) *link {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for {
		l := c.cur.Load()
		if l != nil && !l.lagging() {
			return l
		}
		require.True(t, time.Now().Before(deadline), "the connection never proved direct")
		ctx, cancel := context.WithTimeout(t.Context(), time.Second)
		_, _, err := c.get(ctx, "/") // a reply after the 'srvr' answer confirms
		cancel()
		require.NoError(t, err)
	}
}

// within receives from ch, failing the test after 10s.
func within[T any](t *testing.T, ch <-chan T) T {
	t.Helper()
	timer := time.NewTimer(10 * time.Second)
	defer timer.Stop()
	select {
	case v := <-ch:
		return v
	case <-timer.C:
		t.Fatal("timed out waiting for a call to return")
		var zero T
		return zero
	}
}

// anchorAt is the anchor as a time on the Conn's clock.
func anchorAt(c *Conn) time.Time { return c.base.Add(time.Duration(c.anchor.Load())) }

// gateAll is a hook that holds every request's answer until release.
func gateAll(release <-chan struct{}) func(*seenReq) (<-chan struct{}, step) {
	return func(*seenReq) (<-chan struct{}, step) { return release, answer }
}

// A connection cut mid-session: the client reconnects with the same
// session id and password, the epoch goes on (the reconnect came within
// the deadline), a read in flight at the cut is sent again on the new
// connection and succeeds, and a create in flight is not sent again (its
// outcome is unknown: the queue resolves it by its protected name).
func TestScriptedReconnect(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, sts := dialScripted(t, srv)
	ctx := t.Context()
	sid := c.SessionID()
	own := c.Ownership()
	require.NoError(t, c.CreateContainer(ctx, "/d"))

	// Hold the answers of a getData and a create, then cut.
	release := make(chan struct{})
	srv.script(func(s *zkServer) {
		s.hook = func(r *seenReq) (<-chan struct{}, step) {
			if r.conn == 0 && (r.op == opGetData || r.op == opCreate2) {
				return release, answer
			}
			return nil, answer
		}
	})
	type got struct {
		data []byte
		err  error
	}
	read, made := make(chan got, 1), make(chan error, 1)
	go func() { d, _, err := c.Get(ctx, "/d"); read <- got{d, err} }()
	e.await(t, "the getData on the first connection", func() bool { return e.countLocked(opGetData, 0) == 1 })
	go func() { _, _, _, err := c.CreateSeq(ctx, "/d/_c_x-lock-", nil); made <- err }()
	e.await(t, "the create behind it", func() bool { return e.countLocked(opCreate2, 0) == 1 })
	srv.cut()
	defer close(release)

	require.ErrorIs(t, within(t, made), client.ErrConnectionLoss, "a create cut off is not retried")
	r := within(t, read)
	require.NoError(t, r.err, "a read cut off is retried")
	sts.await(t, StateReconnected, 1)

	e.mu.Lock()
	require.GreaterOrEqual(t, len(e.connects), 2)
	first, second := e.connects[0], e.connects[len(e.connects)-1]
	require.Equal(t, int64(0), first.sid)
	require.Equal(t, sid, second.sid, "the reconnect resumes the session")
	require.Equal(t, sid, second.granted)
	require.True(t, bytes.Equal(e.sessions[sid].password, second.password), "the reconnect carries the session's password")
	e.mu.Unlock()
	require.Equal(t, sid, c.SessionID())
	require.Equal(t, own, c.Ownership(), "the epoch survives a reconnect within the deadline")
	select {
	case <-own:
		t.Fatal("the epoch ended at a reconnect within the deadline")
	default:
	}
	var gets, creates []int
	for _, r := range e.seen(opGetData) {
		gets = append(gets, r.conn)
	}
	for _, r := range e.seen(opCreate2) {
		creates = append(creates, r.conn)
	}
	require.Equal(t, []int{0, 1}, gets, "the getData is sent again on the new connection")
	require.Equal(t, []int{0}, creates, "the create is sent once")
	require.Equal(t, []transition{{StateConnected, sid}, {StateSuspended, sid}, {StateReconnected, sid}}, sts.list())
}

// connectsFor counts the connect requests for session sid. e.mu is held.
func (e *ensemble) connectsFor(sid int64) int {
	n := 0
	for _, cn := range e.connects {
		if cn.sid == sid {
			n++
		}
	}
	return n
}

// A request made while the client is disconnected waits for the next
// connection (it is neither failed nor sent before), and is answered then.
func TestScriptedRequestWaitsWhileDisconnected(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, sts := dialScripted(t, srv)
	ctx := t.Context()
	sid := c.SessionID()
	hold := make(chan struct{})
	srv.script(func(s *zkServer) { s.holdCn = func(int64) <-chan struct{} { return hold } })
	srv.cut()
	sts.await(t, StateSuspended, 1)

	type got struct {
		names []string
		err   error
	}
	listed := make(chan got, 1)
	go func() { names, err := c.Children(ctx, "/"); listed <- got{names, err} }()
	// The first attempt to reconnect gives up after the handshake timeout
	// (500ms) and a second one comes: the request has waited that long.
	e.await(t, "a second attempt to reconnect", func() bool { return e.connectsFor(sid) >= 2 })
	select {
	case r := <-listed:
		t.Fatalf("a request made while disconnected returned %v before a connection", r.err)
	default:
	}
	require.Empty(t, e.seen(opGetChildren2), "sent without a connection")
	close(hold)
	r := within(t, listed)
	require.NoError(t, r.err)
	list := e.seen(opGetChildren2)
	require.Len(t, list, 1, "sent once")
	e.mu.Lock()
	last := e.connects[len(e.connects)-1]
	e.mu.Unlock()
	require.Equal(t, last.conn, list[0].conn, "sent on the connection that resumed the session")
	require.Equal(t, sid, last.granted)
}
