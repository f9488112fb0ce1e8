package zklock_test

import (
	"context"
	"errors"
	"log/slog"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// expect reads events until one with state want arrives, failing on any
// state in bad and after d.
func expect(t *testing.T, ch <-chan zk.Event, d time.Duration, want zk.State, bad ...zk.State) zk.Event {
	t.Helper()
	timeout := time.After(d)
	for {
		select {
		case ev, ok := <-ch:
			require.True(t, ok, "event channel closed waiting for %v", want)
			if ev.State == want {
				return ev
			}
			require.NotContains(t, bad, ev.State, "got %v waiting for %v", ev.State, want)
		case <-timeout:
			t.Fatalf("no %v event within %v", want, d)
		}
	}
}

func TestSessionCloseDeletesEphemeralsAtOnce(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 30*time.Second))
	ctx := ctxFor(t)
	owner := newSession(t, c.Servers(), zklock.WithSessionTimeout(20*time.Second))
	watcher := newSession(t, c.Servers())
	_, err := owner.Client().Create(ctx, "/eph", nil, zk.ModeEphemeral, zk.WorldACL(zk.PermAll)...)
	require.NoError(t, err)

	require.NoError(t, owner.Close())
	<-owner.Done()
	require.Equal(t, zk.StateClosed, owner.Client().State())
	// With a 20s session timeout, only the explicit close can have removed it.
	_, ok, err := watcher.Client().Exists(ctx, "/eph")
	require.NoError(t, err)
	require.False(t, ok, "ephemeral node survived Close")
	require.NoError(t, owner.Close(), "Close is idempotent")

	_, err = owner.Client().Subscribe(ctx)
	require.NoError(t, err)
	m, err := zklock.NewMutex(owner, "/x")
	require.NoError(t, err)
	require.ErrorIs(t, m.Lock(ctx), zklock.ErrSessionClosed)
}

func TestSessionServerRestartWithinTimeout(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Second))
	ctx := ctxFor(t)
	s := newSession(t, c.Servers(), zklock.WithSessionTimeout(8*time.Second))
	events, err := s.Client().Subscribe(ctx)
	require.NoError(t, err)
	sid := s.Client().SessionID()
	_, err = s.Client().Create(ctx, "/eph", nil, zk.ModeEphemeral, zk.WorldACL(zk.PermAll)...)
	require.NoError(t, err)

	require.NoError(t, c.Server(0).Stop())
	expect(t, events, 10*time.Second, zk.StateSuspended, zk.StateExpired)
	require.NoError(t, c.Server(0).Start())
	ev := expect(t, events, 20*time.Second, zk.StateReconnected, zk.StateExpired)
	require.Equal(t, sid, ev.SessionID)
	require.Equal(t, sid, s.Client().SessionID())
	_, ok, err := s.Client().Exists(ctx, "/eph")
	require.NoError(t, err)
	require.True(t, ok, "ephemeral node lost across a restart within the timeout")
}

func TestSessionCutOffPastTimeout(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second))
	events, err := s.Client().Subscribe(ctx)
	require.NoError(t, err)
	sid := s.Client().SessionID()
	require.Equal(t, 2*time.Second, s.Client().Timing().Timeout)

	p.Blackhole()
	cut := time.Now()
	lost := expect(t, events, 10*time.Second, zk.StateLost, zk.StateExpired)
	alive, err := c.SessionAlive(ctx, sid)
	require.NoError(t, err)
	require.True(t, alive, "the ownership deadline must pass before the server expires the session")
	select {
	case <-zklock.Ownership(s):
	default:
		t.Fatal("ownership channel still open after StateLost")
	}
	require.NoError(t, c.WaitSessionExpired(ctx, sid))
	expiredAt := time.Now()
	t.Logf("lost %v after the cut; server expiry seen %v after the cut (lead %v)",
		lost.Time.Sub(cut), expiredAt.Sub(cut), expiredAt.Sub(lost.Time))

	p.Heal()
	ev := expect(t, events, 20*time.Second, zk.StateExpired)
	require.Equal(t, sid, ev.SessionID)
	ev = expect(t, events, 20*time.Second, zk.StateConnected)
	require.NotEqual(t, sid, ev.SessionID)
	require.Equal(t, ev.SessionID, s.Client().SessionID())
}

func TestSessionSurvivesEnsembleLeaderKill(t *testing.T) {
	t.Parallel()
	c := zktest.StartEnsemble(t, 3, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Second))
	ctx := ctxFor(t)
	s := newSession(t, c.Servers(), zklock.WithSessionTimeout(8*time.Second))
	events, err := s.Client().Subscribe(ctx)
	require.NoError(t, err)
	sid := s.Client().SessionID()
	leader, err := c.Leader(ctx)
	require.NoError(t, err)
	require.NoError(t, c.Server(leader).Kill())

	_, err = s.Client().Create(ctx, "/after-kill", []byte("x"), zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
	for i := 0; err != nil && i < 100; i++ { // bounded: ~20s of retries
		time.Sleep(200 * time.Millisecond)
		_, err = s.Client().Create(ctx, "/after-kill", []byte("x"), zk.ModePersistent, zk.WorldACL(zk.PermAll)...)
		if errors.Is(err, zk.ErrNodeExists) {
			err = nil
		}
	}
	require.NoError(t, err, "writes must work again after the leader is killed")
	require.Equal(t, sid, s.Client().SessionID())
	for {
		select {
		case ev := <-events:
			require.NotEqual(t, zk.StateExpired, ev.State)
			continue
		default:
		}
		break
	}
}

// TestSessionDropsNoEvent: a subscriber read only at the end is told every
// one of 50 reconnects, in order. The claim is about the queue, not the
// timing: the session is 10s on a server of its own (the shared one grants
// at most 2s), so that a reconnect slowed by load cannot expire it, and the
// test runs beside the others. (With a 2s session it ran alone, 39s at
// load 15.)
func TestSessionDropsNoEvent(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithSessionTimeouts(200*time.Millisecond, 10*time.Second))
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(10*time.Second))
	slow, err := s.Client().Subscribe(ctx) // read only at the end
	require.NoError(t, err)
	pace, err := s.Client().Subscribe(ctx) // read as we go, to pace the cycles
	require.NoError(t, err)
	const cycles = 50
	for i := 0; i < cycles; i++ {
		p.Reset()
		expect(t, pace, 10*time.Second, zk.StateSuspended)
		expect(t, pace, 10*time.Second, zk.StateReconnected, zk.StateExpired)
		// The next reset once the connection has served: connections
		// reset before their first reply are paced as failed attempts,
		// and a session that gets no reply for long is lost.
		_, _, err := s.Client().Exists(ctx, "/")
		require.NoError(t, err, "cycle %d", i)
	}
	for i := 0; i < cycles; i++ {
		require.Equal(t, zk.StateSuspended, (<-slow).State, "cycle %d", i)
		ev := <-slow
		require.Equal(t, zk.StateReconnected, ev.State, "cycle %d", i)
		require.Equal(t, s.Client().SessionID(), ev.SessionID)
	}
}

func TestNewSessionRejectsBadInput(t *testing.T) {
	ctx := ctxFor(t)
	for _, tc := range []struct {
		name string
		ctx  context.Context
		opts []zklock.SessionOption
		want error
	}{
		{"empty server list", ctx, []zklock.SessionOption{zklock.WithServers()}, zklock.ErrInvalidArgument},
		{"no port", ctx, []zklock.SessionOption{zklock.WithServers("127.0.0.1")}, zklock.ErrInvalidArgument},
		{"bad port", ctx, []zklock.SessionOption{zklock.WithServers("127.0.0.1:http")}, zklock.ErrInvalidArgument},
		{"port out of range", ctx, []zklock.SessionOption{zklock.WithServers("127.0.0.1:70000")}, zklock.ErrInvalidArgument},
		{"empty host", ctx, []zklock.SessionOption{zklock.WithServers(":2181")}, zklock.ErrInvalidArgument},
		{"space inside", ctx, []zklock.SessionOption{zklock.WithServers("127.0.0.1 :2181")}, zklock.ErrInvalidArgument},
		{"space only", ctx, []zklock.SessionOption{zklock.WithServers(" ")}, zklock.ErrInvalidArgument},
		{"zero timeout", ctx, []zklock.SessionOption{zklock.WithSessionTimeout(0)}, zklock.ErrInvalidArgument},
		{"negative timeout", ctx, []zklock.SessionOption{zklock.WithSessionTimeout(-time.Second)}, zklock.ErrInvalidArgument},
		{"negative margin", ctx, []zklock.SessionOption{zklock.WithSafetyMargin(-1)}, zklock.ErrInvalidArgument},
		{"nil logger", ctx, []zklock.SessionOption{zklock.WithLogger((*slog.Logger)(nil))}, zklock.ErrInvalidArgument},
		{"nil dialer", ctx, []zklock.SessionOption{zklock.WithDialer(nil)}, zklock.ErrInvalidArgument},
		{"empty ACL", ctx, []zklock.SessionOption{zklock.WithACL()}, zklock.ErrInvalidArgument},
		{"empty auth scheme", ctx, []zklock.SessionOption{zklock.WithAuth("", nil)}, zklock.ErrInvalidArgument},
		{"nil retry", ctx, []zklock.SessionOption{zklock.WithRetry(nil)}, zklock.ErrInvalidArgument},
		{"nil option", ctx, []zklock.SessionOption{nil}, zklock.ErrInvalidArgument},
		{"nil ctx", nil, nil, zklock.ErrInvalidArgument},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s, err := zklock.NewSession(tc.ctx, tc.opts...)
			require.ErrorIs(t, err, tc.want)
			require.Nil(t, s)
		})
	}
}

// TestNewSessionTrimsServers: white space around an address, as
// strings.Split(os.Getenv("ZK_SERVERS"), ",") leaves it, is dropped: the
// session connects to the server at once. A newcomer's " 127.0.0.1:PORT"
// once cost NewSession 3.1s with nothing logged.
func TestNewSessionTrimsServers(t *testing.T) {
	t.Parallel()
	addr := shared(t).Servers()[0]
	ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(" "+addr, addr+" \t"))
	require.NoError(t, err)
	defer s.Close()
	m, err := zklock.NewMutex(s, "/"+t.Name())
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	require.NoError(t, m.Unlock(ctx))
}

// TestNewSessionRejectsMarginAboveTimeout: a safety margin at or above the
// negotiated timeout would end every ownership epoch before it began.
// NewSession once waited for an epoch until its ctx ended and then reported
// a connect failure; it must refuse at once, saying why, and leave nothing
// running (goleak). The server clamps the requested timeout to its maximum,
// so a margin below the requested timeout can still be too large.
func TestNewSessionRejectsMarginAboveTimeout(t *testing.T) {
	t.Parallel()
	c := standalone(t)
	max := c.MaxSessionTimeout()
	for name, opts := range map[string][]zklock.SessionOption{
		"equal":           {zklock.WithSessionTimeout(max), zklock.WithSafetyMargin(max)},
		"above":           {zklock.WithSessionTimeout(max), zklock.WithSafetyMargin(max + time.Second)},
		"above clamped":   {zklock.WithSessionTimeout(4 * max), zklock.WithSafetyMargin(2 * max)},
		"default timeout": {zklock.WithSafetyMargin(time.Hour)},
	} {
		t.Run(name, func(t *testing.T) {
			ctx, cancel := context.WithTimeout(context.Background(), testTimeout)
			defer cancel()
			s, err := zklock.NewSession(ctx, append([]zklock.SessionOption{zklock.WithServers(c.Servers()...)}, opts...)...)
			require.ErrorIs(t, err, zklock.ErrInvalidArgument)
			require.ErrorContains(t, err, "negotiated")
			require.NoError(t, ctx.Err(), "refused before the ctx ended")
			require.Nil(t, s)
		})
	}
	s := newSession(t, c.Servers(), zklock.WithSessionTimeout(max), zklock.WithSafetyMargin(max-c.TickTime()))
	require.Equal(t, max, s.Client().Timing().Timeout, "a margin just below the timeout is accepted")
}

// TestNewSessionNamesCause: NewSession to an address where nothing listens
// returns when its ctx ends, with an error that wraps both ctx's error and
// the last connection attempt's (issue 37: it was ctx's error alone, the
// cause logged at debug level).
func TestNewSessionNamesCause(t *testing.T) {
	t.Parallel()
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers("127.0.0.1:1"))
	require.Nil(t, s)
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.ErrorIs(t, err, syscall.ECONNREFUSED, "NewSession: %v", err)
	require.Contains(t, err.Error(), "127.0.0.1:1")
}

func TestNewSessionHonoursCtx(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p := zktest.NewProxy(t, []string{"127.0.0.1:1"}) // accepts, then nothing answers
	p.Blackhole()
	s, err := zklock.NewSession(ctx, zklock.WithServers(p.Addrs()...))
	require.ErrorIs(t, err, context.DeadlineExceeded)
	require.Nil(t, s)
}

// blockingHandler is a slog handler whose Warn records block until release
// closes, as a logger writing to a full pipe does.
type blockingHandler struct {
	slog.Handler
	release <-chan struct{}
}

func (h blockingHandler) Enabled(context.Context, slog.Level) bool { return true }

func (h blockingHandler) Handle(ctx context.Context, r slog.Record) error {
	if r.Level >= slog.LevelWarn {
		<-h.release
	}
	return nil
}

// A logger that blocks must not hold back the loss signal: the signal
// comes first, the log line after, off the session's lock.
func TestLossSignalNotHeldByBlockingLogger(t *testing.T) {
	c := shared(t)
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.Servers())
	release := make(chan struct{})
	logger := slog.New(blockingHandler{Handler: slog.DiscardHandler, release: release})
	s := newSession(t, p.Addrs(), zklock.WithSessionTimeout(2*time.Second), zklock.WithLogger(logger))
	t.Cleanup(func() { close(release) }) // before the session's own cleanup closes it
	m, err := zklock.NewMutex(s, lockPath(t, "lock"))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	p.Blackhole()
	deadline := s.OwnershipDeadline()
	select {
	case <-m.Lost():
		late := time.Since(deadline)
		t.Logf("loss signal %v after the deadline", late)
		require.Less(t, late, time.Second, "the loss signal waited for the logger")
	case <-time.After(time.Until(deadline) + 5*time.Second):
		t.Fatal("no loss signal while the logger blocks")
	}
}
