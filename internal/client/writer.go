package client

import (
	"encoding/binary"
	"runtime"
	"time"
)

// flushAt is the size of requests at which the writer writes rather than
// gather more: a burst of requests becomes a few large writes, not one
// very large buffer.
const flushAt = 256 << 10

// writeLoop is the only writer of a connection. It sends batch first (the
// priming requests), then, each time it wakes, every request queued,
// gathered into one buffer and written at once; when nothing was sent for
// pingEvery it pings. It returns when a write fails, the reader ends
// (readerDone, or a write fails on the connection the reader closed), or
// the client closes (its connection is closed then too).
func (c *Client) writeLoop(cn *conn, batch []*request, readerDone <-chan struct{}) error {
	ping := cn.pingEvery()
	timer := time.NewTimer(ping)
	defer timer.Stop()
	last := time.Now()
	for {
		batch = c.takeQueue(batch)
		if len(batch) > 0 {
			err := c.send(cn, batch)
			clear(batch)
			batch = batch[:0]
			if err != nil {
				return err
			}
			last = time.Now()
			continue
		}
		timer.Reset(ping - time.Since(last))
		select {
		case <-c.wake:
			// Let the goroutines that are about to queue a request (woken
			// by the replies just read) queue it first: under concurrency
			// the writer otherwise wakes for each request and writes it
			// alone. Where nothing else is runnable this returns at once.
			runtime.Gosched()
		case <-timer.C:
			if time.Since(last) >= ping {
				r := newRequest(opPing, "")
				r.xid, r.internal = xidPing, true
				batch = append(batch, r)
			}
		case <-readerDone:
			return nil
		case <-c.ctx.Done():
			return ErrClosed
		}
	}
}

// send writes batch: each request's encoding, its xid stamped, copied into
// the write buffer. A request its caller abandoned is dropped unsent. Each
// request is recorded as in flight, with its send time, before the write
// that carries it: its reply may be read before Write returns. When a
// write fails, the requests not yet in the buffer go back to the front of
// the queue, for the next connection.
func (c *Client) send(cn *conn, batch []*request) error {
	buf, out := c.wbuf[:0], c.sending[:0]
	for i, r := range batch {
		if !r.internal && r.state.Load() == stateAbandoned {
			release(r)
			continue
		}
		if len(r.buf) == 0 {
			r.encode() // the client's own requests
		}
		if r.xid == 0 {
			c.xid++
			if c.xid <= 0 {
				c.xid = 1
			}
			r.xid = c.xid
			binary.BigEndian.PutUint32(r.buf[4:], uint32(r.xid))
		}
		buf = append(buf, r.buf...)
		out = append(out, r)
		if len(buf) >= flushAt {
			if err := c.flush(cn, buf, out); err != nil {
				c.requeue(batch[i+1:])
				c.wbuf, c.sending = buf[:0], out[:0]
				return err
			}
			buf, out = buf[:0], out[:0]
		}
	}
	err := c.flush(cn, buf, out)
	if cap(buf) > 4*flushAt {
		buf = nil // do not keep a buffer grown for one huge request
	}
	c.wbuf, c.sending = buf, out[:0]
	return err
}

func (c *Client) flush(cn *conn, buf []byte, rs []*request) error {
	if len(rs) == 0 {
		return nil
	}
	now := time.Now()
	for _, r := range rs {
		r.sent = now
	}
	c.in.add(rs)
	clear(rs)
	_ = cn.nc.SetWriteDeadline(now.Add(cn.readTimeout()))
	_, err := cn.nc.Write(buf)
	return err
}

// requeue puts requests that were never sent back at the front of the
// queue. The client's own requests are dropped: the next connection sends
// its own.
func (c *Client) requeue(rs []*request) {
	keep := make([]*request, 0, len(rs))
	for _, r := range rs {
		if r.internal {
			release(r)
		} else {
			keep = append(keep, r)
		}
	}
	c.mu.Lock()
	c.queue = append(keep, c.queue...)
	c.mu.Unlock()
}
