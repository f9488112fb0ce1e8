package zklock

import (
	"context"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/internal/session"
)

// State is a session state as seen by subscribers.
type State int

const (
	// StateConnecting: no session has been established yet.
	StateConnecting = State(session.StateConnecting)
	// StateConnected: a session is established; after StateExpired it
	// carries the new session id.
	StateConnected = State(session.StateConnected)
	// StateSuspended: the connection was lost; the session may still be
	// alive on the server, so ephemeral nodes may still exist.
	StateSuspended = State(session.StateSuspended)
	// StateLost: the ownership deadline passed while no reply arrived. The
	// server may have expired the session and granted our locks to others;
	// every acquisition made through the session has had its loss signal
	// fired. The session may still come back (StateReconnected) or be
	// reported expired (StateExpired).
	StateLost = State(session.StateLost)
	// StateReconnected: the connection is back with the same session id;
	// ephemeral nodes were kept.
	StateReconnected = State(session.StateReconnected)
	// StateExpired: the server expired the session; its ephemeral nodes are
	// gone. Also reported when no server resumed the session for longer
	// than its timeout (a server behind what the session has seen refuses
	// it): the session is given up, as the servers have expired it by then
	// unless they had no quorum throughout (its nodes live on until they
	// have one). A new session is being established (StateConnected
	// follows).
	StateExpired = State(session.StateExpired)
	// StateClosed: Close was called. Nothing follows.
	StateClosed = State(session.StateClosed)
)

// String returns the state's lower-case name, as used in logs.
func (s State) String() string { return session.State(s).String() }

// Event is one session state transition.
type Event struct {
	State State
	// SessionID is the session the event is about: the new one for
	// StateConnected, the lost one for StateExpired.
	SessionID int64
	// Time is when the client observed the transition.
	Time time.Time
}

// subscriber holds one subscriber's undelivered events. Publishing appends
// under the lock and never waits for the reader, so neither a slow
// subscriber nor many of them can block the ZooKeeper client goroutine, and
// no event is ever dropped.
type subscriber struct {
	mu     sync.Mutex
	queue  []Event
	closed bool          // StateClosed has been queued
	wake   chan struct{} // capacity 1: "the queue changed"
}

func (b *subscriber) push(ev Event) {
	b.mu.Lock()
	if !b.closed {
		b.queue = append(b.queue, ev)
		b.closed = ev.State == StateClosed
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *subscriber) take() ([]Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q, b.closed
}

// deliver forwards queued events to out, in order, until StateClosed has
// been delivered or ctx ends; then it closes out.
func (b *subscriber) deliver(ctx context.Context, out chan<- Event, unsubscribe func()) {
	defer close(out)
	defer unsubscribe()
	for {
		batch, closed := b.take()
		for _, ev := range batch {
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
		if closed {
			return
		}
		select {
		case <-b.wake:
		case <-ctx.Done():
			return
		}
	}
}

// events is the session's subscribers and what a late subscriber must be
// told: publish runs under the session machine's lock, so it only queues.
type events struct {
	mu     sync.Mutex
	subs   map[*subscriber]struct{}
	closed bool  // StateClosed was published
	sid    int64 // the session of the last event
}

func (e *events) init() { e.subs = make(map[*subscriber]struct{}) }

func (e *events) publish(ev Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sid = ev.SessionID
	e.closed = ev.State == StateClosed
	for b := range e.subs {
		b.push(ev)
	}
}

// Subscribe returns a channel of every session state transition from now
// on, in order. Events are queued without bound, so none is dropped and a
// slow reader never delays the session. The channel is closed after the
// StateClosed event or when ctx ends. Subscribing to a closed session yields
// a single StateClosed event.
func (s *Session) Subscribe(ctx context.Context) (<-chan Event, error) {
	if ctx == nil {
		return nil, errs.ErrNilContext
	}
	e := &s.events
	b := &subscriber{wake: make(chan struct{}, 1)}
	e.mu.Lock()
	if e.closed {
		b.push(Event{State: StateClosed, SessionID: e.sid, Time: time.Now()})
	} else {
		e.subs[b] = struct{}{}
	}
	e.mu.Unlock()
	out := make(chan Event)
	go b.deliver(ctx, out, func() {
		e.mu.Lock()
		delete(e.subs, b)
		e.mu.Unlock()
	})
	return out, nil
}
