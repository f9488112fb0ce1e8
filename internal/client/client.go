package client

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// closeWait bounds how long Close waits for the server to acknowledge the
// end of the session.
const closeWait = time.Second

// Client is one ZooKeeper session over a connection to one of the servers
// at a time, re-established when it is lost. It is safe for concurrent use;
// requests from many goroutines are pipelined on the connection and
// answered in the order they were sent.
//
// The client runs two goroutines while connected (one writes, one reads)
// and one otherwise, whatever the number of requests and watches; Close
// ends them.
type Client struct {
	cfg Config
	log *slog.Logger
	reg registry
	in  inflight

	mu       sync.Mutex
	queue    []*request // requests waiting for the writer, oldest first
	closeErr error      // once set, new requests fail with it
	creds    []Credential
	lastErr  error // of the last failed connection attempt
	wake     chan struct{}

	sessionID atomic.Int64
	timeout   atomic.Int64 // negotiated session timeout, ns
	lastZxid  atomic.Int64 // highest zxid of a reply read
	connected atomic.Bool

	ctx       context.Context // ends at Close: the connection goroutines stop
	cancel    context.CancelFunc
	readyOnce sync.Once
	readyErr  error
	ready     chan struct{} // closed once the first session is usable, or never will be
	done      chan struct{} // closed once every goroutine has ended

	// Owned by the connection goroutine (run).
	hosts    hostList
	password []byte
	xid      int32
	wbuf     []byte
	sending  []*request
}

// Dial starts a client and waits until it has a session, the server has
// accepted its credentials, or ctx ends. On failure nothing is left
// running, and the error wraps ctx.Err() and the last connection
// attempt's error (errors.Is finds, say, syscall.ECONNREFUSED), or
// ErrAuthFailed, or ErrInvalidConfig.
func Dial(ctx context.Context, cfg Config) (*Client, error) {
	cfg, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	c := &Client{
		cfg:   cfg,
		log:   cfg.Logger,
		creds: cfg.Credentials,
		wake:  make(chan struct{}, 1),
		ready: make(chan struct{}),
		done:  make(chan struct{}),
	}
	c.hosts.init(cfg.Servers, cfg.MaxReconnectDelay)
	c.ctx, c.cancel = context.WithCancel(context.Background())
	go c.run()
	select {
	case <-c.ready:
		if c.readyErr != nil {
			c.Close()
			return nil, c.readyErr
		}
		return c, nil
	case <-ctx.Done():
		last := c.lastError()
		c.Close()
		where := strings.Join(cfg.Servers, ",")
		if last == nil {
			return nil, fmt.Errorf("zklock: zk: connect to %s: %w", where, ctx.Err())
		}
		return nil, fmt.Errorf("zklock: zk: connect to %s: %w (last attempt: %w)", where, ctx.Err(), last)
	}
}

// markReady ends Dial's wait, with err if the client cannot be used.
func (c *Client) markReady(err error) {
	c.readyOnce.Do(func() {
		c.readyErr = err
		close(c.ready)
	})
}

func (c *Client) lastError() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.lastErr
}

// Close ends the session: if connected, it asks the server to close it
// (the server deletes the session's ephemeral nodes at once), waiting at
// most a second for the answer; otherwise the server expires the session
// after its timeout. Requests queued or in flight fail with ErrClosed, or
// return their reply if it arrives first; every watch ends with
// ErrClosed; OnState is told StateClosed. Close returns once every
// goroutine of the client has ended. It is idempotent and always returns
// nil.
func (c *Client) Close() error {
	c.mu.Lock()
	if c.closeErr != nil {
		c.mu.Unlock()
		<-c.done
		return nil
	}
	c.closeErr = ErrClosed
	queued := c.takeQueueLocked()
	c.mu.Unlock()
	for _, r := range queued {
		c.fail(r, ErrClosed)
	}
	if c.connected.Load() {
		c.closeSession()
	}
	c.cancel()
	<-c.done
	return nil
}

// closeSession sends closeSession and waits for its reply, or closeWait.
func (c *Client) closeSession() {
	r := newRequest(opCloseSession, "")
	c.mu.Lock()
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	c.wakeWriter()
	ctx, cancel := context.WithTimeout(context.Background(), closeWait)
	defer cancel()
	select {
	case <-r.done:
		release(r)
	case <-ctx.Done():
		if !r.state.CompareAndSwap(statePending, stateAbandoned) {
			<-r.done
			release(r)
		}
		c.log.Debug("zklock: zk: no answer to closeSession", "wait", closeWait)
	}
}

func (c *Client) takeQueueLocked() []*request {
	q := c.queue
	c.queue = nil
	return q
}

// SessionID returns the id of the current session, or of the last one
// while there is none.
func (c *Client) SessionID() int64 { return c.sessionID.Load() }

// Timeout returns the session timeout the server negotiated last.
func (c *Client) Timeout() time.Duration { return time.Duration(c.timeout.Load()) }

// errAuthFailedConn ends a connection on which the server rejected a
// credential.
var errAuthFailedConn = errors.New("zklock: zk: the server rejected a credential")
