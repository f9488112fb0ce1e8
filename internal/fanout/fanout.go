// Package fanout delivers one stream of events to any number of
// subscribers: a zklock Session's state transitions, published by the root
// package (under the session machine's lock) and read through zk.Client's
// Subscribe. It lives here so that both can reach it: zk cannot import the
// root package, which imports zk.
package fanout

import (
	"context"
	"sync"
)

// Hub is the subscribers of one stream and what a late subscriber must be
// told. Publish only queues, so it may run under the publisher's locks.
// The zero Hub is not usable: make one with New.
type Hub[E any] struct {
	isFinal func(E) bool // the stream's last event: nothing follows it

	mu    sync.Mutex
	subs  map[*subscriber[E]]struct{}
	final *E // the final event, once published
}

// New returns a Hub whose stream ends with the first event isFinal accepts.
func New[E any](isFinal func(E) bool) *Hub[E] {
	return &Hub[E]{isFinal: isFinal, subs: make(map[*subscriber[E]]struct{})}
}

// Publish queues ev for every subscriber. It never waits for a reader.
// Events after the final one are ignored.
func (h *Hub[E]) Publish(ev E) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.final != nil {
		return
	}
	if h.isFinal(ev) {
		h.final = &ev
	}
	for b := range h.subs {
		b.push(ev, h.final != nil)
	}
}

// Subscribe returns a channel of every event published from now on, in
// order. Events are queued without bound, so none is dropped and a slow
// reader never delays Publish. The channel is closed after the final event
// or when ctx ends. Subscribing after the final event yields that event
// alone. ctx must not be nil.
func (h *Hub[E]) Subscribe(ctx context.Context) <-chan E {
	b := &subscriber[E]{wake: make(chan struct{}, 1)}
	h.mu.Lock()
	if h.final != nil {
		b.push(*h.final, true)
	} else {
		h.subs[b] = struct{}{}
	}
	h.mu.Unlock()
	out := make(chan E)
	go b.deliver(ctx, out, func() {
		h.mu.Lock()
		delete(h.subs, b)
		h.mu.Unlock()
	})
	return out
}

// subscriber holds one subscriber's undelivered events. Pushing appends
// under the lock and never waits for the reader, so neither a slow
// subscriber nor many of them can block the publisher, and no event is
// ever dropped.
type subscriber[E any] struct {
	mu     sync.Mutex
	queue  []E
	closed bool          // the final event has been queued
	wake   chan struct{} // capacity 1: "the queue changed"
}

func (b *subscriber[E]) push(ev E, final bool) {
	b.mu.Lock()
	if !b.closed {
		b.queue = append(b.queue, ev)
		b.closed = final
	}
	b.mu.Unlock()
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *subscriber[E]) take() ([]E, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	q := b.queue
	b.queue = nil
	return q, b.closed
}

// deliver forwards queued events to out, in order, until the final event
// has been delivered or ctx ends; then it unsubscribes and closes out.
func (b *subscriber[E]) deliver(ctx context.Context, out chan<- E, unsubscribe func()) {
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
