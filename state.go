package zklock

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// State is a session state as seen by subscribers.
type State int

const (
	// StateConnecting: no session has been established yet.
	StateConnecting State = iota
	// StateConnected: a session is established; after StateExpired it
	// carries the new session id.
	StateConnected
	// StateSuspended: the connection was lost; the session may still be
	// alive on the server, so ephemeral nodes may still exist.
	StateSuspended
	// StateLost: the ownership deadline passed while no reply arrived. The
	// server may have expired the session and granted our locks to others;
	// every acquisition made through the session has had its loss signal
	// fired. The session may still come back (StateReconnected) or be
	// reported expired (StateExpired).
	StateLost
	// StateReconnected: the connection is back with the same session id;
	// ephemeral nodes were kept.
	StateReconnected
	// StateExpired: the server expired the session; its ephemeral nodes are
	// gone. A new session is being established (StateConnected follows).
	StateExpired
	// StateClosed: Close was called. Nothing follows.
	StateClosed
)

var stateNames = [...]string{"connecting", "connected", "suspended", "lost", "reconnected", "expired", "closed"}

// String returns the state's lower-case name, as used in logs.
func (s State) String() string {
	if s >= 0 && int(s) < len(stateNames) {
		return stateNames[s]
	}
	return fmt.Sprintf("State(%d)", int(s))
}

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

// Subscribe returns a channel of every session state transition from now
// on, in order. Events are queued without bound, so none is dropped and a
// slow reader never delays the session. The channel is closed after the
// StateClosed event or when ctx ends. Subscribing to a closed session yields
// a single StateClosed event.
func (s *Session) Subscribe(ctx context.Context) (<-chan Event, error) {
	if ctx == nil {
		return nil, ErrNilContext
	}
	b := &subscriber{wake: make(chan struct{}, 1)}
	s.mu.Lock()
	if s.state == StateClosed {
		b.push(Event{State: StateClosed, SessionID: s.sid, Time: time.Now()})
	} else {
		s.subs[b] = struct{}{}
	}
	s.mu.Unlock()
	out := make(chan Event)
	go b.deliver(ctx, out, func() {
		s.mu.Lock()
		delete(s.subs, b)
		s.mu.Unlock()
	})
	return out, nil
}

// publishLocked records a transition and queues it for every subscriber.
// s.mu must be held.
func (s *Session) publishLocked(st State, sid int64) {
	s.state = st
	ev := Event{State: st, SessionID: sid, Time: time.Now()}
	s.log.Info("zklock: session "+st.String(), "session", fmt.Sprintf("0x%x", sid))
	s.reportStateLocked(st)
	for b := range s.subs {
		b.push(ev)
	}
	close(s.changed)
	s.changed = make(chan struct{})
}
