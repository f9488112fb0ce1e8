package zklock

import (
	"context"
	"sync"
	"time"
)

// latest holds the newest undelivered state of a watch (Election.Observe,
// WatchLock). put never waits for the reader, so a slow reader cannot hold
// up the watch loop, and a newer state replaces an undelivered older one.
type latest[T any] struct {
	mu      sync.Mutex
	v       T
	pending bool
	closed  bool
	wake    chan struct{} // capacity 1: "the box changed"
}

func newLatest[T any]() *latest[T] { return &latest[T]{wake: make(chan struct{}, 1)} }

func (b *latest[T]) put(v T) {
	b.mu.Lock()
	b.v, b.pending = v, true
	b.mu.Unlock()
	b.signal()
}

func (b *latest[T]) close() {
	b.mu.Lock()
	b.closed = true
	b.mu.Unlock()
	b.signal()
}

func (b *latest[T]) signal() {
	select {
	case b.wake <- struct{}{}:
	default:
	}
}

func (b *latest[T]) take() (v T, ok, closed bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	v, ok = b.v, b.pending
	b.pending = false
	return v, ok, b.closed
}

// deliver sends each newest state to out until the box is closed and empty
// or ctx ends; then it closes out. While a send waits for the reader, a
// newer state replaces the one being offered.
func (b *latest[T]) deliver(ctx context.Context, out chan<- T) {
	defer close(out)
	var v T
	has := false
	for {
		if nv, ok, closed := b.take(); ok {
			v, has = nv, true
		} else if closed && !has {
			return
		}
		var send chan<- T
		if has {
			send = out
		}
		select {
		case send <- v:
			has = false
		case <-b.wake:
		case <-ctx.Done():
			return
		}
	}
}

// sleep waits d or until ctx ends: a watch's pause before it reads again
// after an error.
func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
