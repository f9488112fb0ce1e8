// Package session is zklock's ownership machine: one ZooKeeper session, the
// epochs during which the client may assume the server holds it, and the
// requests the queue recipes make through it.
//
// An epoch begins when a session is established (or resumes after replies
// were late) and ends at the first of: the ownership deadline (the send
// time of the request behind the last reply, plus the negotiated timeout,
// minus the safety margin), a session-expired event, or Close. The server
// cannot expire the session before the deadline, so a holder told at the
// end of its epoch is told before any rival can be granted its lock. An
// epoch never restarts; a later stretch is a new epoch. Nodes registered
// with an epoch (Track) are deleted when it ends, if the session survived.
//
// Conn implements queue.Conn. Data flows one way: the public API calls the
// queue, the queue calls Conn, Conn calls go-zookeeper below the wire
// observer (internal/wire). Nothing here calls back up, except through the
// hooks in Config, which run under the Conn's lock and must not block.
package session

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/wire"
)

// ErrClosed is returned by requests on a closed Conn, and by blocking calls
// whose Conn is closed while they wait.
var ErrClosed = errors.New("zklock: session closed")

// ErrInvalid is wrapped by Dial's error when the configuration is at fault:
// a server list go-zookeeper refuses, or a safety margin that is not below
// the session timeout the server negotiated.
var ErrInvalid = errors.New("invalid session configuration")

// Credential is an authentication sent at every (re)connect.
type Credential struct {
	Scheme string
	Auth   []byte
}

// Config is what Dial needs. Every field must be set except Margin (0: a
// fifth of the negotiated timeout), TLS (nil: plain connections) and the
// hooks.
type Config struct {
	Servers []string
	Timeout time.Duration // requested session timeout
	Margin  time.Duration
	Logger  *slog.Logger
	ACL     []zk.ACL // of every node created
	Creds   []Credential
	Dialer  zk.Dialer
	TLS     *tls.Config
	Backoff func() backoff.BackOff // retry policy for transient errors
	// Timing is the servers' tickTime and syncLimit, for servers whose
	// 'conf' does not tell; TimingSet says the caller chose it, and then it
	// is a floor under what the servers tell.
	Timing    Timing
	TimingSet bool

	// OnState is called on every transition, with the session it is about
	// (the new one for StateConnected, the lost one for StateExpired) and
	// when it was observed, in order, under the Conn's lock: it must return
	// quickly and not call the Conn. StateClosed is the last call.
	OnState func(st State, sid int64, at time.Time)
	// OnEpochEnd is called, under the Conn's lock, when an epoch ends, with
	// the epoch's key (queue.Epoch.Key) and whether Close ended it.
	OnEpochEnd func(key any, closing bool)
}

// Conn is one ZooKeeper session that survives connection loss and expiry.
// It is safe for concurrent use.
type Conn struct {
	cfg  Config
	log  *slog.Logger
	zk   *zk.Conn
	base time.Time // monotonic origin for the atomics below

	anchor  atomic.Int64             // the leader restarted the session's clock after this (ns since base; evidence.go)
	floor   atomic.Int64             // replies to requests sent before this prove nothing (ns since base)
	timeout atomic.Int64             // the lowest timeout granted, or grantable, to the session (ns)
	wireSID atomic.Int64             // session id of the latest connect response
	netConn atomic.Pointer[net.Conn] // the latest connection, closed by Close
	cur     atomic.Pointer[link]     // the latest established connection

	sv       atomic.Pointer[survey] // what the servers said of themselves (timing.go)
	surveyed chan struct{}          // closed when the servers have answered
	logs     logq

	mu         sync.Mutex
	timeoutSID int64 // the session c.timeout is about
	suspended  int64 // suspendedTotal at the last look
	state      State
	sid        int64         // current (or last) session id
	ep         *epoch        // current ownership epoch; nil when none
	changed    chan struct{} // closed and replaced on every transition
	watches    map[string]*watch
	// childWaiters are the callers of ChildrenW waiting, by path.
	childWaiters map[string][]chan zk.Event
	creates      map[string]*createRec    // creates awaiting their reply, by request path
	dirs         dirCache                 // lock paths and parents known to exist
	sending      map[string]chan struct{} // creates whose send someone awaits

	bg       context.Context // cancelled by Close; bounds background cleanup
	stopBg   context.CancelFunc
	bgWG     sync.WaitGroup
	bgMu     sync.Mutex // orders spawn against Close
	bgClosed bool
	done     chan struct{}
	zkDone   chan struct{} // closed when go-zookeeper's goroutines have ended
	zkSet    chan struct{} // closed once zk is set (connections begin before)
}

// Dial connects and waits until a session is established and authenticated,
// or ctx ends. On error nothing is left running.
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	c := &Conn{
		cfg:     cfg,
		log:     cfg.Logger,
		base:    time.Now(),
		changed: make(chan struct{}),
		watches: make(map[string]*watch), childWaiters: make(map[string][]chan zk.Event),
		creates:  make(map[string]*createRec),
		sending:  make(map[string]chan struct{}),
		done:     make(chan struct{}),
		zkDone:   make(chan struct{}),
		surveyed: make(chan struct{}),
		zkSet:    make(chan struct{}),
	}
	// Until the servers have answered, every server may be a follower
	// with the configured timing.
	c.sv.Store(&survey{timing: cfg.Timing, followers: true, told: "the configured timing"})
	c.suspended = suspendedClock()
	c.logs.init()
	c.bg, c.stopBg = context.WithCancel(context.Background())
	c.spawn(func() { c.logs.run(c.log, c.bg.Done()) })
	if err := c.connect(ctx); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func (c *Conn) connect(ctx context.Context) error {
	c.spawn(func() {
		sv := c.surveyServers(c.bg)
		c.sv.Store(&sv)
		if sv.floor > 0 {
			c.negotiated(c.wireSID.Load(), sv.floor)
		}
		close(c.surveyed)
	})
	conn, events, err := zk.Connect(c.cfg.Servers, c.cfg.Timeout,
		zk.WithDialer(c.dial),
		zk.WithHostProvider(&hostProvider{stop: c.bg.Done(), delay: reconnectMin}),
		zk.WithEventCallback(c.onEvent),
		zk.WithLogger(zkLogger{c.log}),
		zk.WithLogInfo(false))
	if err != nil {
		close(c.zkDone)
		return fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	c.zk = conn
	close(c.zkSet)
	go func() {
		for range events { // closed when go-zookeeper's loop has ended
		}
		close(c.zkDone)
	}()
	c.spawn(c.watchdog)
	c.spawn(c.heartbeat)
	if err := c.awaitEstablished(ctx); err != nil {
		return err
	}
	for _, cr := range c.cfg.Creds {
		if err := c.do(ctx, func() error { return c.zk.AddAuth(cr.Scheme, cr.Auth) }); err != nil {
			return fmt.Errorf("zklock: add %s auth: %w", cr.Scheme, err)
		}
	}
	return nil
}

// awaitEstablished waits for the first session and its first epoch. The
// safety margin is checked here, because only the server's answer tells the
// negotiated timeout it must stay below: with a margin at or above it, the
// ownership deadline would pass before every epoch began.
func (c *Conn) awaitEstablished(ctx context.Context) error {
	for {
		c.mu.Lock()
		sid, changed := c.sid, c.changed
		c.mu.Unlock()
		if sid != 0 {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("zklock: connect to %v: %w", c.cfg.Servers, ctx.Err())
		}
	}
	if t := c.Timeout(); c.cfg.Margin >= t {
		return fmt.Errorf("%w: safety margin %v is not below the session timeout %v the server negotiated "+
			"(requested %v); the margin can only be checked once the server has answered",
			ErrInvalid, c.cfg.Margin, t, c.cfg.Timeout)
	}
	select {
	case <-c.surveyed:
	case <-ctx.Done():
		return fmt.Errorf("zklock: connect to %v: %w", c.cfg.Servers, ctx.Err())
	}
	if err := c.checkTiming(); err != nil {
		return err
	}
	if _, err := c.awaitEpoch(ctx); err != nil {
		return fmt.Errorf("zklock: connect to %v: %w", c.cfg.Servers, err)
	}
	return nil
}

// dial wraps every connection go-zookeeper makes in the wire observer,
// after the TLS handshake when Config.TLS is set.
func (c *Conn) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	nc, err := c.cfg.Dialer(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	// A server that accepts but does not answer (still starting, paused,
	// partitioned after accept) must not hold the client for long: the
	// session expires if no server is reached within the timeout. Like the
	// Java client, share the timeout among the servers, but allow any one
	// handshake at most a quarter of it, so that several attempts fit.
	handshake := HandshakeTimeout(c.cfg.Timeout, len(c.cfg.Servers))
	if c.cfg.TLS != nil {
		// The observer must see the plaintext protocol: wrap the TLS conn.
		if nc, err = c.handshakeTLS(nc, addr, handshake); err != nil {
			c.log.Debug("zklock: TLS handshake failed", "server", addr, "err", err)
			return nil, err
		}
	}
	w := wire.Wrap(nc, c.newLink(addr), handshake)
	c.netConn.Store(&w)
	return w, nil
}

// HandshakeTimeout bounds one connect handshake (and a TLS handshake before
// it): the session timeout shared among the servers, at most a quarter of
// it, at least 250ms.
func HandshakeTimeout(timeout time.Duration, servers int) time.Duration {
	return max(min(timeout/time.Duration(max(servers, 1)), timeout/4), 250*time.Millisecond)
}

// handshakeTLS runs the TLS client handshake on nc within d; on failure nc
// is closed.
func (c *Conn) handshakeTLS(nc net.Conn, addr string, d time.Duration) (net.Conn, error) {
	cfg := c.cfg.TLS
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(nc, cfg)
	ctx, cancel := context.WithTimeout(c.bg, d)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		nc.Close()
		return nil, fmt.Errorf("zklock: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}

// Close ends the ZooKeeper session: the server deletes its ephemeral nodes
// at once (if it can be reached within a second; otherwise they vanish when
// the server expires the session). Close stops every goroutine the Conn
// started, fires every outstanding loss signal, publishes StateClosed and
// then closes Done. Close is idempotent.
func (c *Conn) Close() {
	c.mu.Lock()
	if c.state == StateClosed {
		c.mu.Unlock()
		<-c.done
		return
	}
	c.endEpochLocked(true)
	c.publishLocked(StateClosed, c.sid)
	c.mu.Unlock()

	if c.zk != nil {
		c.zk.Close() // sends closeSession if connected, waiting at most a second
	}
	if nc := c.netConn.Load(); nc != nil {
		(*nc).Close() // unblocks go-zookeeper if it is stuck in a handshake
	}
	c.bgMu.Lock()
	c.bgClosed = true
	c.bgMu.Unlock()
	c.stopBg()
	<-c.zkDone
	c.bgWG.Wait()
	close(c.done)
}

// Done returns a channel that is closed when Close has finished.
func (c *Conn) Done() <-chan struct{} { return c.done }

// SessionID returns the id of the current session, or of the last one while
// none is established.
func (c *Conn) SessionID() int64 {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sid
}

// State returns the current state.
func (c *Conn) State() State {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.state
}

// Timeout returns the session timeout negotiated with the server.
func (c *Conn) Timeout() time.Duration { return time.Duration(c.timeout.Load()) }

// ZK returns the go-zookeeper connection.
func (c *Conn) ZK() *zk.Conn { return c.zk }

// Go runs f on a goroutine that Close waits for, unless Close has begun
// (then it returns false). ctx ends when Close begins; f must return soon
// after.
func (c *Conn) Go(f func(ctx context.Context)) bool {
	return c.spawn(func() { f(c.bg) })
}

// spawn runs f on a goroutine that Close waits for, unless Close has begun.
// f must return soon after c.bg is cancelled.
func (c *Conn) spawn(f func()) bool {
	c.bgMu.Lock()
	defer c.bgMu.Unlock()
	if c.bgClosed {
		return false
	}
	c.bgWG.Add(1)
	go func() {
		defer c.bgWG.Done()
		f()
	}()
	return true
}

// zkLogger sends go-zookeeper's log lines to the session's logger at debug
// level.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug(fmt.Sprintf("zk: "+format, args...))
}
