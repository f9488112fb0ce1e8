package client

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// A request's life: a caller fills one in and queues it (do); the writer
// takes it from the queue, encodes it, records it as in flight and writes
// it; the reader matches its reply, decodes the result into it and
// completes it; the caller reads the result and releases it to the pool.
// At every moment exactly one of them owns it, so its fields need no lock;
// ownership passes through the queue's and the in-flight lists' mutexes,
// and back to the caller through done.
//
// A request is encoded by its caller, into a buffer that stays with the
// pooled request, before it is queued: the writer only stamps the xid and
// copies the bytes, and nothing reads the caller's arguments (data, ACL,
// ops) after the call returns, even a call abandoned while its request
// waits to be sent.
//
// A request queued by GoCreate or GoChildren has a Call instead of a
// waiting caller: completing it copies its outcome into the Call and
// releases it.
//
// A caller whose ctx ends abandons the request (state pending→abandoned)
// and returns at once; whoever holds the request next sees that and
// releases it instead of completing it: the writer drops it unsent, the
// reader drops its reply.
type request struct {
	// What to send.
	op      int32
	xid     int32 // ordinary requests get theirs from the writer
	path    string
	data    []byte
	version int32
	flags   int32 // create mode; addWatch mode; removeWatches type
	ttl     int64
	acl     []ACL
	ops     []Op     // multi
	nops    int      // multi: how many ops were sent
	scheme  string   // auth; data is then the client's own copy
	restore *restore // setWatches: the watches it restores
	watch   *Watch   // the watch the request sets, linked on success
	call    *Call    // GoCreate, GoChildren: completed instead of a waiting caller

	// internal: no caller waits (a ping, the credentials and watches sent
	// on a new connection); the reader releases it after its reply.
	internal bool

	buf   []byte    // the encoded frame, its xid stamped by the writer
	sent  time.Time // when its bytes were handed to the socket
	state atomic.Int32
	done  chan struct{} // receives once when the request completes

	// The outcome.
	err      error // the server's error (a sentinel), or ErrConnectionLoss
	zxid     int64
	watchSet bool // the server set the requested watch
	stat     Stat
	rdata    []byte
	rpath    string
	children []string
	acls     []ACL
	results  []OpResult
	failedOp int // multi: the index of the op that failed
}

const (
	statePending int32 = iota
	stateDone
	stateAbandoned
)

var requests = sync.Pool{New: func() any { return &request{done: make(chan struct{}, 1)} }}

func newRequest(op int32, path string) *request {
	r := requests.Get().(*request)
	r.op, r.path = op, path
	return r
}

// keepBuf is the largest encoding buffer a pooled request keeps.
const keepBuf = 16 << 10

// release returns r to the pool. Its done channel is empty: it is sent on
// only when the caller will receive.
func release(r *request) {
	done, buf := r.done, r.buf[:0]
	if cap(buf) > keepBuf {
		buf = nil
	}
	*r = request{done: done, buf: buf}
	requests.Put(r)
}

// encode encodes r into its buffer, with xid 0 for an ordinary request,
// and lets go of the caller's slices.
func (r *request) encode() {
	r.buf = appendRequest(r.buf[:0], r)
	if r.op != opAuth {
		r.data = nil
	}
	r.acl, r.ops = nil, nil
}

// failure wraps r's error for its caller, naming the request and path.
func (r *request) failure() error {
	if r.err == nil {
		return nil
	}
	return &Error{Op: opName(r.op), Path: r.path, Err: r.err}
}

// do queues r and waits until it completes or ctx ends. It returns nil when
// r completed: the outcome is in r, and the caller releases r. Otherwise r
// is no longer the caller's: it returns ctx.Err() (r may still be sent,
// or may have been: the outcome of a write is then unknown), or the error
// that closed the client.
//
// A ctx that carries a stop channel (WithStop) ends the wait as ctx's end
// does, with ErrStopped, when the channel closes first.
func (c *Client) do(ctx context.Context, r *request) error {
	stop := StopOf(ctx)
	if err := ctx.Err(); err != nil {
		release(r)
		return err
	}
	select {
	case <-stop:
		release(r)
		return ErrStopped
	default:
	}
	r.encode()
	if n := len(r.buf) - 4; n > c.cfg.MaxPacket {
		// The server reads the length first and drops the connection
		// for one over its jute.maxbuffer, failing every request in
		// flight on it; and a caller that retries would drop it again.
		err := &Error{Op: opName(r.op), Path: r.path,
			Err: fmt.Errorf("%w: %d bytes, over %d", ErrRequestTooLarge, n, c.cfg.MaxPacket)}
		release(r)
		return err
	}
	if err := c.enqueue(r); err != nil {
		err = &Error{Op: opName(r.op), Path: r.path, Err: err}
		release(r)
		return err
	}
	err := ErrStopped
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		err = ctx.Err()
	case <-stop:
	}
	if r.state.CompareAndSwap(statePending, stateAbandoned) {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		return err
	}
	<-r.done // completed meanwhile: its outcome is known
	return nil
}

type stopKey struct{}

// WithStop returns ctx carrying stop: a request made with the returned
// context is abandoned, as when ctx ends, if stop closes before it
// completes, and returns ErrStopped. It spares a caller who must give up
// at either of two signals a merged context: a cancel func and a callback
// registered with, and removed from, the signal's context for every
// request.
func WithStop(ctx context.Context, stop <-chan struct{}) context.Context {
	return context.WithValue(ctx, stopKey{}, stop)
}

// StopOf returns the stop channel ctx carries (WithStop), or nil.
func StopOf(ctx context.Context) <-chan struct{} {
	stop, _ := ctx.Value(stopKey{}).(<-chan struct{})
	return stop
}

// enqueue adds r to the requests the writer sends next, unless the client
// is closing.
func (c *Client) enqueue(r *request) error {
	c.mu.Lock()
	if c.closeErr != nil {
		err := c.closeErr
		c.mu.Unlock()
		return err
	}
	c.queue = append(c.queue, r)
	c.mu.Unlock()
	c.wakeWriter()
	return nil
}

func (c *Client) wakeWriter() {
	select {
	case c.wake <- struct{}{}:
	default:
	}
}

// takeQueue moves every queued request to dst.
func (c *Client) takeQueue(dst []*request) []*request {
	c.mu.Lock()
	dst = append(dst, c.queue...)
	clear(c.queue)
	c.queue = c.queue[:0]
	c.mu.Unlock()
	return dst
}

// complete hands a request's outcome to its caller: the watch it set is
// linked first, so that the watch's events, which the reader may read
// next, find it. An abandoned request is released instead; an internal
// one too.
func (c *Client) complete(r *request) {
	if r.internal || !r.state.CompareAndSwap(statePending, stateDone) {
		release(r)
		return
	}
	if r.call != nil {
		r.call.settle(r)
		release(r)
		return
	}
	if r.watch != nil && r.watchSet {
		c.reg.link(r.watch)
	}
	r.done <- struct{}{}
}

// fail completes r with err, without a reply.
func (c *Client) fail(r *request, err error) {
	r.err = err
	r.watchSet = false
	c.complete(r)
}
