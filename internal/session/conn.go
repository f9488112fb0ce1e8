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
// Conn implements the recipes' queue.Conn. Data flows one way: the public API calls the
// queue, the queue calls Conn, Conn calls zklock's ZooKeeper client
// (internal/client), whose hooks (OnState, OnReply, OnWatch) tell the Conn
// what each connection sees. Nothing here calls back up, except through
// the hooks in Config, which run under the Conn's lock and must not block.
package session

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// ErrClosed is returned by requests on a closed Conn, and by blocking calls
// whose Conn is closed while they wait.
var ErrClosed = errs.ErrSessionClosed

// ErrInvalid is wrapped by Dial's error when the configuration is at fault:
// a server list the client refuses, or a safety margin that is not below
// the session timeout the server negotiated.
var ErrInvalid = errors.New("invalid session configuration")

// Config is what Dial needs. Every field must be set except Margin (0: a
// fifth of the negotiated timeout), Dialer (nil: a net.Dialer), TLS (nil:
// plain connections), Creds and the hooks.
type Config struct {
	Servers []string
	Timeout time.Duration // requested session timeout
	Margin  time.Duration
	Logger  *slog.Logger
	ACL     []client.ACL // of every node created
	Creds   []client.Credential
	Dialer  func(ctx context.Context, network, addr string) (net.Conn, error)
	TLS     *tls.Config
	Backoff func() backoff.BackOff // retry policy for transient errors
	// MaxPacket is the servers' jute.maxbuffer (client.Config.MaxPacket).
	MaxPacket int
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
	// the epoch's key (Epoch.Key) and whether Close ended it.
	OnEpochEnd func(key any, closing bool)

	// Announces, if set, tells from a node's data whether a change of its
	// data is a proof a data watcher may act on (ReadWatch's Released);
	// nil: none is. The recipes know their nodes' data; the session does
	// not.
	Announces func(data []byte) bool
	// PrimitivePath, if set, names the primitive a node of ours belongs to,
	// for the log lines of an epoch's end; nil: the node's parent.
	PrimitivePath func(node string) string
}

// Conn is one ZooKeeper session that survives connection loss and expiry.
// It is safe for concurrent use.
type Conn struct {
	cfg  Config
	log  *slog.Logger
	cl   *client.Client // set once Dial has it; clSet is closed then
	base time.Time      // monotonic origin for the atomics below

	anchor    atomic.Int64         // the leader restarted the session's clock after this (ns since base; evidence.go)
	floor     atomic.Int64         // replies to requests sent before this prove nothing (ns since base)
	timeout   atomic.Int64         // the lowest timeout granted, or grantable, to the session (ns)
	connSID   atomic.Int64         // session id of the latest connection
	connected atomic.Bool          // a connection with a valid session is up
	cur       atomic.Pointer[link] // the latest established connection

	sv       atomic.Pointer[survey]       // what the servers said of themselves (timing.go)
	svMu     sync.Mutex                   // orders the updates of sv
	surveyed chan struct{}                // closed when the servers have answered
	silent   sync.Map                     // addr → error: why the survey's latest question to it went unanswered
	attempts atomic.Pointer[dialAttempts] // Dial's, which the survey tells of HTTP servers (identify.go)
	ready    atomic.Bool                  // Dial succeeded: what the servers say may end epochs
	warned   atomic.Bool                  // the WARN that the timing is stated was logged
	logs     logq

	rearmMu  sync.Mutex
	rearms   []rearm       // connects that may have re-armed the session (rearm.go)
	rearmEnd atomic.Int64  // the earliest sent+grant of rearms (ns since base); noRearm if none
	wake     chan struct{} // wakes the watchdog when the deadline moves earlier

	// live is ep, readable without mu: awaitEpoch and track look at it
	// first, so that the goroutines locking through one session do not
	// queue on mu for every grant (the session's mu was 62% of the mutex
	// delay of 64 goroutines on 64 locks, 2026-11-26). Written with ep.
	live      atomic.Pointer[epoch]
	suspended atomic.Int64 // suspendedTotal at the last look; written under mu

	mu         sync.Mutex
	timeoutSID int64 // the session c.timeout is about
	state      State
	sid        int64         // current (or last) session id
	ep         *epoch        // current ownership epoch; nil when none
	changed    chan struct{} // closed and replaced on every transition
	watches    map[string]*watch
	// childWaiters are the callers of ChildrenW waiting, by path.
	childWaiters map[string][]chan client.Event
	// childWatches are the client's watches ChildrenW set, by path, kept
	// until they fire so that StopChildren can remove them.
	childWatches map[string][]*client.Watch
	trees        map[string]*tree // Follow's watches, by directory
	noPersistent bool             // the server refused addWatch
	assumeModes  atomic.Bool      // AssumeWatchModes
	linger       time.Duration    // treeLinger; tests shorten it
	dirs         dirCache         // lock paths and parents known to exist
	dialing      bool             // Dial has not returned: a client that closes itself is Dial's failure
	broken       error            // the client closed itself (a credential refused): no epoch will come

	bg       context.Context // cancelled by Close; bounds background cleanup
	stopBg   context.CancelFunc
	bgWG     sync.WaitGroup
	bgMu     sync.Mutex // orders spawn against Close
	bgClosed bool
	done     chan struct{}
	clSet    chan struct{} // closed once cl is set, or Dial failed (connections begin before)
}

// Dial connects and waits until a session is established and authenticated,
// or ctx ends. On error nothing is left running; when ctx ended, the error
// wraps ctx.Err() and the last connection attempt's error (errors.Is finds,
// say, syscall.ECONNREFUSED).
func Dial(ctx context.Context, cfg Config) (*Conn, error) {
	c := &Conn{
		cfg:          cfg,
		log:          cfg.Logger,
		base:         time.Now(),
		changed:      make(chan struct{}),
		watches:      make(map[string]*watch),
		childWaiters: make(map[string][]chan client.Event),
		childWatches: make(map[string][]*client.Watch),
		trees:        make(map[string]*tree),
		linger:       treeLinger,
		done:         make(chan struct{}),
		surveyed:     make(chan struct{}),
		clSet:        make(chan struct{}),
		dialing:      true,
	}
	// Until the servers have answered, every server may be a follower
	// with the configured timing, and none has answered (unknownErr names
	// them when none ever does).
	c.sv.Store(&survey{timing: cfg.Timing, followers: true, source: SourceUnknown, unreached: slices.Clone(cfg.Servers)})
	c.rearmEnd.Store(noRearm)
	c.wake = make(chan struct{}, 1)
	c.suspended.Store(suspendedClock())
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
	// dctx ends early, with a *notZooKeeperError as its cause, when every
	// server answered in another protocol.
	dctx, giveUp := context.WithCancelCause(ctx)
	defer giveUp(nil)
	attempts := newDialAttempts(c.cfg.Servers, giveUp)
	attempts.probe = func(addr string) { c.identify(attempts, addr) }
	c.attempts.Store(attempts)
	c.spawn(func() {
		c.surveyServers(c.bg)
		if f := c.sv.Load().floor; f > 0 {
			c.negotiated(c.connSID.Load(), f)
		}
		close(c.surveyed)
	})
	c.spawn(func() { c.warnWhileDialing(attempts) })
	cl, err := client.Dial(dctx, client.Config{
		Servers:          c.cfg.Servers,
		Timeout:          c.cfg.Timeout,
		Dialer:           c.dialServer,
		TLS:              c.cfg.TLS,
		Credentials:      c.cfg.Creds,
		HandshakeTimeout: HandshakeTimeout(c.cfg.Timeout, len(c.cfg.Servers)),
		MaxPacket:        c.cfg.MaxPacket,
		Logger:           slog.New(&queueHandler{q: &c.logs, to: c.log.Handler()}),
		OnState:          attempts.observe(c.onClientState),
		OnReply:          c.onReply,
		OnWatch:          c.onWatch,
	})
	if err != nil {
		close(c.clSet)
		if errors.Is(err, client.ErrInvalidConfig) {
			return fmt.Errorf("%w: %v", ErrInvalid, err)
		}
		if cause := context.Cause(dctx); ctx.Err() == nil && errors.Is(cause, errs.ErrNotZooKeeper) {
			return cause
		}
		if ctx.Err() != nil && errors.Is(err, ctx.Err()) {
			last := attempts.lastErr()
			if last == nil { // an attempt in progress: a server that has not answered zklock yet is why
				last = c.unansweredErr()
			}
			return &dialError{servers: c.cfg.Servers, ctxErr: ctx.Err(), last: last}
		}
		return err
	}
	c.cl = cl
	close(c.clSet)
	c.mu.Lock()
	c.dialing = false
	broken := c.broken
	c.mu.Unlock()
	if broken != nil {
		return broken
	}
	c.spawn(c.watchdog)
	c.spawn(c.heartbeat)
	return c.awaitEstablished(ctx)
}

// awaitEstablished waits for the first epoch, the session being
// established. The safety margin is checked here, because only the
// server's answer tells the negotiated timeout it must stay below: with a
// margin at or above it, the ownership deadline would pass before every
// epoch began.
func (c *Conn) awaitEstablished(ctx context.Context) error {
	if t := c.Timeout(); c.cfg.Margin >= t {
		return fmt.Errorf("%w: safety margin %v is not below the session timeout %v the server negotiated "+
			"(requested %v); the margin can only be checked once the server has answered",
			ErrInvalid, c.cfg.Margin, t, c.cfg.Timeout)
	}
	select {
	case <-c.surveyed:
	case <-ctx.Done():
		// Connected, but a server has not answered the survey yet: name
		// it and why, not only the ctx (the newcomer's CLI said "cannot
		// connect" with no cause while a silent member held the survey).
		return &dialError{servers: c.cfg.Servers, ctxErr: ctx.Err(), last: c.unansweredErr()}
	}
	if _, err := c.awaitEpoch(ctx); err != nil {
		return fmt.Errorf("zklock: connect to %v: %w", c.cfg.Servers, err)
	}
	c.confirm(ctx)
	if err := c.timingErr(c.sv.Load()); err != nil {
		return err
	}
	c.ready.Store(true)
	c.warnStated(c.sv.Load())
	c.recheck() // what was learned while Dial checked
	return nil
}

// HandshakeTimeout bounds one connect handshake (and a TLS handshake before
// it): the session timeout shared among the servers, at most a quarter of
// it, at least 250ms. A server that accepts but does not answer (still
// starting, paused, partitioned after accept) must not hold the client for
// long: the session expires if no server is reached within the timeout.
func HandshakeTimeout(timeout time.Duration, servers int) time.Duration {
	return max(min(timeout/time.Duration(max(servers, 1)), timeout/4), 250*time.Millisecond)
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

	<-c.clSet // Dial has the client, or failed without one
	if c.cl != nil {
		c.cl.Close() // sends closeSession if connected, waiting at most a second
	}
	c.bgMu.Lock()
	c.bgClosed = true
	c.bgMu.Unlock()
	c.stopBg()
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

// Client returns the ZooKeeper client, for requests outside the recipes.
func (c *Conn) Client() *client.Client { return c.cl }

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
