// Package wire observes the ZooKeeper client protocol on a connection, below
// go-zookeeper, to learn what its API hides: the negotiated session timeout,
// the send time of the request behind each reply, and the zxid of each create.
//
// The framing relied upon (ZooKeeper's jute protocol): every packet in either
// direction is a 4-byte big-endian length followed by that many bytes. The
// first packet each way on a connection is the connect request / response.
// After that a client request starts with int32 xid, int32 opcode; a server
// packet starts with int32 xid, int64 zxid, int32 err. The server answers a
// session's requests in the order it received them (ZooKeeper's FIFO client
// order guarantee), so the n-th reply (xid != -1) answers the n-th request.
// Watch notifications carry xid -1 and answer nothing.
package wire

import (
	"encoding/binary"
	"net"
	"sync"
	"time"
)

// How much of each frame the parser retains; the rest is skipped, not
// copied. A request keeps enough for its header and a create's path; a
// reply only its header (xid, zxid, err), all a reply is read for, so a
// listing of a thousand children costs the observer nothing.
const (
	keepRequest = 4096
	keepReply   = 16
)

const (
	opCreate          = 1
	opCreateContainer = 19
	xidNotification   = -1
)

// Handler receives what the observer learns. Methods are called from the
// connection's reader or writer goroutine and must not block.
type Handler interface {
	// Connected reports a connect response: the session id (0 when the
	// server refused to resume an expired session), the negotiated timeout,
	// and when the connect request was sent.
	Connected(sessionID int64, timeout time.Duration, sent time.Time)
	// Replied reports a reply, read at at, to a request sent at sent.
	Replied(sent, at time.Time)
	// Created reports that the create request for path (the path as sent,
	// before the server appends a sequence number) succeeded in session at
	// zxid, the node's czxid. A create whose request path is longer than
	// the observer retains of a frame is not reported.
	Created(path string, zxid, session int64)
	// Sending reports that a create request for path is being written;
	// any request queued after this call reaches the server after it.
	Sending(path string)
}

type pending struct {
	sent time.Time
	xid  int32
	path string // a create's request path; "" for other requests or if unreadable
}

// conn is a net.Conn whose traffic is parsed as it passes.
type conn struct {
	net.Conn
	h Handler

	handshake *time.Timer // closes the connection if the connect response is late

	mu      sync.Mutex
	queue   []pending // requests awaiting a reply, oldest first
	session int64
	readAt  time.Time // when the bytes being parsed were read
	in, out framer
}

// Wrap returns c observed by h. If no connect response arrives within
// handshake, the connection is closed: go-zookeeper would otherwise wait ten
// read timeouts on a server that accepted the connection but does not answer
// (a paused process, a partition after accept), before trying another.
func Wrap(c net.Conn, h Handler, handshake time.Duration) net.Conn {
	w := &conn{Conn: c, h: h}
	w.out.first, w.in.first = true, true
	w.out.keep, w.in.keep = keepRequest, keepReply
	w.handshake = time.AfterFunc(handshake, func() { c.Close() })
	return w
}

// Close stops the handshake timer and closes the connection.
func (c *conn) Close() error {
	c.handshake.Stop()
	return c.Conn.Close()
}

// Write records the requests in p before sending them: once they are on
// the wire, the reader goroutine may see their replies before Write
// returns. A short write fails the connection, so recording all of p is
// safe.
func (c *conn) Write(p []byte) (int, error) {
	now := time.Now()
	c.mu.Lock()
	c.out.feed(p, func(body []byte, first bool) { c.request(body, first, now) })
	c.mu.Unlock()
	return c.Conn.Write(p)
}

func (c *conn) Read(p []byte) (int, error) {
	n, err := c.Conn.Read(p)
	c.mu.Lock()
	c.readAt = time.Now()
	c.in.feed(p[:n], c.reply)
	c.mu.Unlock()
	return n, err
}

func (c *conn) request(body []byte, first bool, sent time.Time) {
	if first {
		c.queue = append(c.queue, pending{sent: sent, xid: 0})
		return
	}
	if len(body) < 8 {
		return
	}
	op := int32(binary.BigEndian.Uint32(body[4:8]))
	p := pending{sent: sent, xid: int32(binary.BigEndian.Uint32(body[0:4]))}
	if op == opCreate || op == opCreateContainer {
		if path, ok := readString(body[8:]); ok {
			p.path = path
			c.h.Sending(path)
		}
	}
	c.queue = append(c.queue, p)
}

func (c *conn) reply(body []byte, first bool) {
	if first {
		c.connected(body)
		return
	}
	if len(body) < 16 {
		return
	}
	xid := int32(binary.BigEndian.Uint32(body[0:4]))
	if xid == xidNotification {
		return
	}
	p, ok := c.pop(xid)
	if !ok {
		return
	}
	c.h.Replied(p.sent, c.readAt)
	if p.path != "" && binary.BigEndian.Uint32(body[12:16]) == 0 {
		c.h.Created(p.path, int64(binary.BigEndian.Uint64(body[4:12])), c.session)
	}
}

// pop removes the request that xid answers. Requests ahead of it that were
// never answered (impossible over one ZooKeeper connection, but cheap to
// tolerate) are dropped with it.
func (c *conn) pop(xid int32) (pending, bool) {
	for i, p := range c.queue {
		if p.xid == xid {
			c.queue = c.queue[i+1:]
			return p, true
		}
	}
	return pending{}, false
}

func (c *conn) connected(body []byte) {
	if len(c.queue) == 0 || len(body) < 16 {
		return
	}
	c.handshake.Stop()
	sent := c.queue[0].sent
	c.queue = c.queue[1:]
	timeout := time.Duration(int32(binary.BigEndian.Uint32(body[4:8]))) * time.Millisecond
	c.session = int64(binary.BigEndian.Uint64(body[8:16]))
	c.h.Connected(c.session, timeout, sent)
}

func readString(b []byte) (string, bool) {
	if len(b) < 4 {
		return "", false
	}
	n := int(int32(binary.BigEndian.Uint32(b[:4])))
	if n < 0 || len(b) < 4+n {
		return "", false
	}
	return string(b[4 : 4+n]), true
}
