package zklock

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/internal/wire"
)

// Session is one ZooKeeper session shared by every primitive of a process.
//
// It survives connection loss (StateSuspended, then StateReconnected with
// the same session id) and session expiry (StateExpired, then StateConnected
// with a new id), retries transient errors within each caller's ctx, and
// publishes every transition to subscribers without dropping any.
//
// Its central promise is the ownership deadline: the time after which the
// server may have expired the session, computed from the send time of the
// request behind the last reply, not from when the client noticed trouble.
// Every acquisition's loss signal fires at that deadline or at expiry,
// whichever is first, so a holder learns it may have lost a lock before
// another client can be granted it.
//
// A Session is safe for concurrent use. It must not be copied.
type Session struct {
	opts sessionOptions
	log  *slog.Logger
	conn *zk.Conn
	base time.Time // monotonic origin for the atomics below

	anchor  atomic.Int64             // send time of the request behind the last reply (ns since base)
	timeout atomic.Int64             // negotiated session timeout (ns)
	wireSID atomic.Int64             // session id of the latest connect response
	netConn atomic.Pointer[net.Conn] // the latest connection, closed by Close

	mu      sync.Mutex
	state   State
	sid     int64         // current (or last) session id
	ep      *epoch        // current ownership epoch; nil or ended when none
	changed chan struct{} // closed and replaced on every transition
	subs    map[*subscriber]struct{}
	watches map[string]*watch
	creates map[string]*createRec      // creates awaiting their reply, by request path
	sending map[string]chan struct{}   // creates whose send someone awaits
	owners  map[string]*ReentrantMutex // reentrant holders by path, to name misuse
	holds   map[*queue.Held]holdRec    // granted acquisitions, for Metrics only
	reports reporter                   // Metrics calls arising under mu

	bg       context.Context // cancelled by Close; bounds background cleanup
	stopBg   context.CancelFunc
	bgWG     sync.WaitGroup
	bgMu     sync.Mutex // orders spawn against Close
	bgClosed bool
	done     chan struct{}
	zkDone   chan struct{} // closed when go-zookeeper's goroutines have ended
}

// NewSession connects to ZooKeeper and waits until a session is established
// or ctx ends. On error nothing is left running.
func NewSession(ctx context.Context, opts ...SessionOption) (*Session, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	o := defaultSessionOptions()
	for _, opt := range opts {
		if opt == nil {
			return nil, invalid("nil option")
		}
		if err := opt(&o); err != nil {
			return nil, err
		}
	}
	s := newSession(o)
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

func newSession(o sessionOptions) *Session {
	s := &Session{
		opts:    o,
		log:     o.logger,
		base:    time.Now(),
		changed: make(chan struct{}),
		subs:    make(map[*subscriber]struct{}),
		watches: make(map[string]*watch),
		creates: make(map[string]*createRec),
		sending: make(map[string]chan struct{}),
		owners:  make(map[string]*ReentrantMutex),
		holds:   make(map[*queue.Held]holdRec),
		done:    make(chan struct{}),
		zkDone:  make(chan struct{}),
	}
	s.reports.wake = make(chan struct{}, 1)
	s.bg, s.stopBg = context.WithCancel(context.Background())
	return s
}

func (s *Session) connect(ctx context.Context) error {
	conn, events, err := zk.Connect(s.opts.servers, s.opts.timeout,
		zk.WithDialer(s.dial),
		zk.WithHostProvider(&hostProvider{stop: s.bg.Done(), delay: reconnectMin}),
		zk.WithEventCallback(s.onEvent),
		zk.WithLogger(zkLogger{s.log}),
		zk.WithLogInfo(false))
	if err != nil {
		return fmt.Errorf("%w: %v", ErrInvalidOption, err)
	}
	s.conn = conn
	go func() {
		for range events { // closed when go-zookeeper's loop has ended
		}
		close(s.zkDone)
	}()
	s.spawn(s.watchdog)
	if s.opts.metrics != nil {
		s.spawn(s.reports.run) // ends after reporting StateClosed
	}
	if err := s.awaitEstablished(ctx); err != nil {
		s.Close()
		return err
	}
	for _, c := range s.opts.creds {
		if err := s.do(ctx, func() error { return s.conn.AddAuth(c.scheme, c.auth) }); err != nil {
			s.Close()
			return fmt.Errorf("zklock: add %s auth: %w", c.scheme, err)
		}
	}
	return nil
}

// awaitEstablished waits for the first session and its first epoch. The
// safety margin is checked here, because only the server's answer tells the
// negotiated timeout it must stay below: with a margin at or above it, the
// ownership deadline would pass before every epoch began.
func (s *Session) awaitEstablished(ctx context.Context) error {
	for {
		s.mu.Lock()
		sid, changed := s.sid, s.changed
		s.mu.Unlock()
		if sid != 0 {
			break
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return fmt.Errorf("zklock: connect to %v: %w", s.opts.servers, ctx.Err())
		}
	}
	if t := s.Timeout(); s.opts.margin >= t {
		return invalid("safety margin %v is not below the session timeout %v the server negotiated "+
			"(requested %v); the margin can only be checked once the server has answered",
			s.opts.margin, t, s.opts.timeout)
	}
	if _, err := s.awaitEpoch(ctx); err != nil {
		return fmt.Errorf("zklock: connect to %v: %w", s.opts.servers, err)
	}
	return nil
}

// dial wraps every connection go-zookeeper makes in the wire observer,
// after the TLS handshake when WithTLS is set.
func (s *Session) dial(network, addr string, timeout time.Duration) (net.Conn, error) {
	c, err := s.opts.dialer(network, addr, timeout)
	if err != nil {
		return nil, err
	}
	// A server that accepts but does not answer (still starting, paused,
	// partitioned after accept) must not hold the client for long: the
	// session expires if no server is reached within the timeout. Like the
	// Java client, share the timeout among the servers, but allow any one
	// handshake at most a quarter of it, so that several attempts fit.
	n := time.Duration(len(s.opts.servers))
	handshake := max(min(s.opts.timeout/n, s.opts.timeout/4), 250*time.Millisecond)
	if s.opts.tls != nil {
		// The observer must see the plaintext protocol: wrap the TLS conn.
		if c, err = s.handshakeTLS(c, addr, handshake); err != nil {
			s.log.Debug("zklock: TLS handshake failed", "server", addr, "err", err)
			return nil, err
		}
	}
	w := wire.Wrap(c, (*observer)(s), handshake)
	s.netConn.Store(&w)
	return w, nil
}

// Close ends the ZooKeeper session: the server deletes its ephemeral nodes
// at once (if it can be reached within a second; otherwise they vanish when
// the server expires the session). Close stops every goroutine the session
// started, fires every outstanding loss signal, publishes StateClosed and
// then closes Done. Blocking calls in progress return ErrSessionClosed.
// Close is idempotent and always returns nil.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.state == StateClosed {
		s.mu.Unlock()
		<-s.done
		return nil
	}
	s.endEpochLocked(true)
	s.publishLocked(StateClosed, s.sid)
	s.mu.Unlock()

	s.conn.Close() // sends closeSession if connected, waiting at most a second
	if c := s.netConn.Load(); c != nil {
		(*c).Close() // unblocks go-zookeeper if it is stuck in a handshake
	}
	s.bgMu.Lock()
	s.bgClosed = true
	s.bgMu.Unlock()
	s.stopBg()
	<-s.zkDone
	s.bgWG.Wait()
	close(s.done)
	return nil
}

// Done returns a channel that is closed when Close has finished.
func (s *Session) Done() <-chan struct{} { return s.done }

// SessionID returns the id of the current session, or of the last one while
// none is established.
func (s *Session) SessionID() int64 {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.sid
}

// State returns the current session state.
func (s *Session) State() State {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.state
}

// Timeout returns the session timeout negotiated with the server.
func (s *Session) Timeout() time.Duration { return time.Duration(s.timeout.Load()) }

// Conn returns the underlying go-zookeeper connection, for reads and writes
// outside zklock's recipes. Do not close it; close the Session.
func (s *Session) Conn() *zk.Conn { return s.conn }

// zkLogger sends go-zookeeper's log lines to the session's logger at debug
// level.
type zkLogger struct{ l *slog.Logger }

func (z zkLogger) Printf(format string, args ...any) {
	z.l.Debug(fmt.Sprintf("zk: "+format, args...))
}

func (s *Session) setOwner(path string, r *ReentrantMutex) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if r == nil {
		delete(s.owners, path)
		return
	}
	s.owners[path] = r
}

func (s *Session) owner(path string) *ReentrantMutex {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.owners[path]
}
