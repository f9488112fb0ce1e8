package session

import (
	"errors"
	"fmt"
	"log/slog"
	"os"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/internal/errs"
)

// A Dial that cannot connect says why while it retries, not only when its
// ctx ends (a minute, say): the client logs each failed attempt at debug
// level alone, which a program's logger rarely shows.
const (
	// dialWarnAfter is how long the first failed attempt waits for a
	// later one to succeed before it is logged at WARN: a first server
	// that refuses while the next one answers says nothing.
	dialWarnAfter = time.Second
	// dialWarnEvery spaces the warnings while the attempts keep failing:
	// one per interval, naming the latest cause, never one per attempt.
	dialWarnEvery = 10 * time.Second
)

// dialAttempts follows the failed connection attempts of a Dial until the
// first connection. Its methods never block: OnState calls them.
type dialAttempts struct {
	failed       chan struct{} // closed at the first failed attempt
	done         chan struct{} // closed at the first connection
	after, every time.Duration // dialWarnAfter, dialWarnEvery

	// servers are the addresses tried; giveUp ends the Dial with its
	// cause once each one's latest attempt answered in another protocol
	// (notZK): none will ever be ZooKeeper, so waiting for ctx to end
	// could only repeat the answer. A server whose attempt failed
	// otherwise (refused, silent) may be ZooKeeper coming up, and keeps
	// the Dial trying.
	servers []string
	giveUp  func(error)
	// probe asks a server whose attempt ended silent whether it is an
	// HTTP server (identify); nil: none is asked.
	probe func(addr string)

	mu      sync.Mutex
	notZK   map[string]*client.NotZooKeeperError
	http    map[string]*client.NotZooKeeperError // servers a probe found to be HTTP servers
	probing map[string]bool
	gaveUp  bool
	n       int // failed attempts, all told
	warned  int // of them, those counted in a warning
	server  string
	last    error // the latest failed attempt's cause
	first   bool  // failed is closed
	connect bool  // done is closed
}

func newDialAttempts(servers []string, giveUp func(error)) *dialAttempts {
	return &dialAttempts{failed: make(chan struct{}), done: make(chan struct{}), after: dialWarnAfter,
		every: dialWarnEvery, servers: slices.Compact(slices.Sorted(slices.Values(client.ServerAddrs(servers)))),
		giveUp: giveUp, notZK: make(map[string]*client.NotZooKeeperError),
		http: make(map[string]*client.NotZooKeeperError), probing: make(map[string]bool)}
}

// observe wraps the client's OnState: a disconnection with a cause before
// the first connection is a failed attempt.
func (a *dialAttempts) observe(next func(client.State, client.StateInfo)) func(client.State, client.StateInfo) {
	return func(st client.State, info client.StateInfo) {
		a.mu.Lock()
		switch {
		case a.connect:
		case st == client.StateConnected:
			a.connect = true
			close(a.done)
		case st == client.StateDisconnected && info.Err != nil:
			a.n++
			a.server, a.last = info.Server, info.Err
			if !a.first {
				a.first = true
				close(a.failed)
			}
			a.sortLocked(info)
		}
		a.mu.Unlock()
		next(st, info)
	}
}

// sortLocked keeps the server's latest answer in another protocol, or
// forgets it after another failure, and gives the Dial up when every
// server's latest attempt answered so.
func (a *dialAttempts) sortLocked(info client.StateInfo) {
	var nz *client.NotZooKeeperError
	switch {
	case errors.As(info.Err, &nz):
	case errors.Is(info.Err, os.ErrDeadlineExceeded) && a.http[info.Server] != nil:
		nz = a.http[info.Server] // silent again, as an HTTP server written in Go is
	case errors.Is(info.Err, os.ErrDeadlineExceeded):
		delete(a.notZK, info.Server)
		if a.probe != nil && !a.probing[info.Server] {
			a.probing[info.Server] = true // once: its answer holds until another kind of failure
			a.probe(info.Server)
		}
		return
	default:
		delete(a.notZK, info.Server)
		delete(a.http, info.Server)
		delete(a.probing, info.Server)
		return
	}
	a.notZK[info.Server] = nz
	a.giveUpIfNoneLocked()
}

// identified records that a probe found addr to be an HTTP server, whose
// silent attempts then count as its answer.
func (a *dialAttempts) identified(addr string, nz *client.NotZooKeeperError) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.connect || !a.probing[addr] {
		return // connected, or addr failed otherwise since it was asked
	}
	a.http[addr], a.notZK[addr] = nz, nz
	a.giveUpIfNoneLocked()
}

// identifiedEarly records that the survey found addr to be an HTTP server,
// whether or not an attempt to it was silent yet; as after a probe, a later
// failure of another kind forgets it.
func (a *dialAttempts) identifiedEarly(addr string, nz *client.NotZooKeeperError) {
	a.mu.Lock()
	a.probing[addr] = true
	a.mu.Unlock()
	a.identified(addr, nz)
}

// giveUpIfNoneLocked gives the Dial up when every server's latest attempt
// answered in another protocol.
func (a *dialAttempts) giveUpIfNoneLocked() {
	for _, s := range a.servers {
		if a.notZK[s] == nil {
			return
		}
	}
	if !a.gaveUp && a.giveUp != nil {
		a.gaveUp = true
		e := &notZooKeeperError{servers: a.servers}
		for _, s := range a.servers {
			e.answers = append(e.answers, a.notZK[s])
		}
		a.giveUp(e) // cancels a context: it does not block
	}
}

// lastErr is the latest failed attempt's cause, nil if none failed.
func (a *dialAttempts) lastErr() error {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.last
}

// warnWhileDialing logs a warning dialWarnAfter after the first failed
// attempt, and every dialWarnEvery after that, while no connection has
// been made, until the Conn closes. It logs through the Conn's log queue,
// so that a logger that blocks holds back nothing.
func (c *Conn) warnWhileDialing(a *dialAttempts) {
	select {
	case <-a.failed:
	case <-a.done:
		return
	case <-c.bg.Done():
		return
	}
	t := time.NewTimer(a.after)
	defer t.Stop()
	for {
		select {
		case <-t.C:
			c.warnAttempts(a)
			t.Reset(a.every)
		case <-a.done:
			return
		case <-c.bg.Done():
			return
		}
	}
}

func (c *Conn) warnAttempts(a *dialAttempts) {
	a.mu.Lock()
	n, since, server, last := a.n, a.n-a.warned, a.server, a.last
	a.warned = n
	a.mu.Unlock()
	if since == 0 {
		return // an attempt in progress (a handshake that takes a while): nothing new to say
	}
	c.logs.add(slog.LevelWarn, "zklock: cannot connect to ZooKeeper yet; retrying until the context ends",
		"servers", strings.Join(c.cfg.Servers, ","), "server", server, "err", bare(last), "attempts", n)
}

// dialError is Dial's error when its ctx ended before a connection: ctx's
// error and the last attempt's cause, each said once, under one prefix.
type dialError struct {
	servers []string
	ctxErr  error
	last    error // nil if no attempt ended
}

func (e *dialError) Error() string {
	if e.last == nil {
		return fmt.Sprintf("zklock: connect to %s: %v", strings.Join(e.servers, ","), e.ctxErr)
	}
	return fmt.Sprintf("zklock: connect to %s: %v (last attempt: %s)", strings.Join(e.servers, ","), e.ctxErr,
		bare(e.last))
}

func (e *dialError) Unwrap() []error {
	if e.last == nil {
		return []error{e.ctxErr}
	}
	return []error{e.ctxErr, e.last}
}

// notZooKeeperError is Dial's error when every server answered in another
// protocol: it names each with its answer (errors.As finds a
// *client.NotZooKeeperError), and is errs.ErrNotZooKeeper. Only this
// error is: a Dial whose ctx ended while a server may still have been
// ZooKeeper is not, whatever its last attempt heard.
type notZooKeeperError struct {
	servers []string
	answers []*client.NotZooKeeperError // of each server
}

func (e *notZooKeeperError) Error() string {
	if len(e.servers) == 1 {
		return fmt.Sprintf("zklock: connect to %s: %v", e.servers[0], e.answers[0])
	}
	said := make([]string, len(e.servers))
	for i, s := range e.servers {
		said[i] = fmt.Sprintf("%s answered %q", s, e.answers[i].Head+"…")
	}
	return fmt.Sprintf("zklock: connect to %s: no server is a ZooKeeper client port: %s",
		strings.Join(e.servers, ","), strings.Join(said, ", "))
}

func (e *notZooKeeperError) Is(target error) bool { return target == errs.ErrNotZooKeeper }

func (e *notZooKeeperError) Unwrap() []error {
	out := make([]error, len(e.answers))
	for i, a := range e.answers {
		out[i] = a
	}
	return out
}

// bare is err's text without the prefixes of the packages it passed
// through ("zklock: zk: "), which the message it goes into has already.
func bare(err error) string {
	s := err.Error()
	for _, p := range []string{"zklock: zk: ", "zklock: "} {
		s = strings.TrimPrefix(s, p)
	}
	return s
}
