package zklock

import (
	"context"
	"sync"
	"time"

	"github.com/zklock/zklock/internal/errs"
	"github.com/zklock/zklock/zk"
)

// subscriber holds one subscriber's undelivered events. Publishing appends
// under the lock and never waits for the reader, so neither a slow
// subscriber nor many of them can block the ZooKeeper client goroutine, and
// no event is ever dropped.
type subscriber struct {
	mu     sync.Mutex
	queue  []zk.Event
	closed bool          // StateClosed has been queued
	wake   chan struct{} // capacity 1: "the queue changed"
}

func (b *subscriber) push(ev zk.Event) {
	b.mu.Lock()
	if !b.closed {
		b.queue = append(b.queue, ev)
		b.closed = ev.State == zk.StateClosed
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *subscriber) take() ([]zk.Event, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q, b.closed
}

// deliver forwards queued events to out, in order, until zk.StateClosed has
// been delivered or ctx ends; then it closes out.
func (b *subscriber) deliver(ctx context.Context, out chan<- zk.Event, unsubscribe func()) {
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

func (e *events) publish(ev zk.Event) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.sid = ev.SessionID
	e.closed = ev.State == zk.StateClosed
	for b := range e.subs {
		b.push(ev)
	}
}

// Subscribe returns a channel of every session state transition from now
// on, in order. Events are queued without bound, so none is dropped and a
// slow reader never delays the session. The channel is closed after the
// zk.StateClosed event or when ctx ends. Subscribing to a closed session yields
// a single zk.StateClosed event.
func (s *Session) Subscribe(ctx context.Context) (<-chan zk.Event, error) {
	if ctx == nil {
		return nil, errs.ErrNilContext
	}
	e := &s.events
	b := &subscriber{wake: make(chan struct{}, 1)}
	e.mu.Lock()
	if e.closed {
		b.push(zk.Event{State: zk.StateClosed, SessionID: e.sid, Time: time.Now()})
	} else {
		e.subs[b] = struct{}{}
	}
	e.mu.Unlock()
	out := make(chan zk.Event)
	go b.deliver(ctx, out, func() {
		e.mu.Lock()
		delete(e.subs, b)
		e.mu.Unlock()
	})
	return out, nil
}
