package client

import (
	"fmt"
	"time"
)

// reader is the goroutine that reads one connection: it matches each
// reply to its request, decodes it and completes the request, and routes
// each watch notification to its watches, one packet after the other, so
// that an event is delivered before any reply read after it.
type reader struct {
	c         *Client
	cn        *conn
	authsLeft int // auth packets of the connection's priming not yet answered
	scratch   []delivery
	err       error         // why the reader stopped
	done      chan struct{} // closed when it has
}

// run reads until the connection fails or a packet is wrong; then it
// closes the connection, so that the writer stops too.
func (rd *reader) run() {
	defer close(rd.done)
	defer rd.cn.nc.Close()
	timeout := rd.cn.readTimeout()
	nc := rd.cn.nc
	// Each frame must arrive whole within the read timeout of the moment
	// the reader began to wait for it (pings keep a live, idle
	// connection's frames coming).
	rd.cn.fr.before = func() { _ = nc.SetReadDeadline(time.Now().Add(timeout)) }
	replied := false
	for {
		body, err := rd.cn.fr.next()
		if err != nil {
			rd.err = err
			return
		}
		if !replied {
			replied = true
			rd.cn.replied.Store(true)
		}
		if err := rd.packet(body); err != nil {
			rd.err = err
			return
		}
	}
}

// packet handles one packet from the server. An error ends the connection.
func (rd *reader) packet(body []byte) error {
	d := decoder{b: body}
	h := decodeReplyHeader(&d)
	if d.err != nil {
		return d.err
	}
	if h.xid == xidNotification {
		typ, path := decodeEvent(&d)
		if d.err != nil {
			return d.err
		}
		rd.scratch = rd.c.reg.route(rd.scratch[:0], typ, path)
		rd.c.deliver(rd.scratch)
		return nil
	}
	c := rd.c
	r := c.in.pop(h.xid)
	if r == nil {
		return fmt.Errorf("zklock: zk: reply with xid %d answers no request", h.xid)
	}
	if want := r.xid; want != h.xid {
		c.fail(r, ErrConnectionLoss) // r is its caller's again: not read after
		return fmt.Errorf("zklock: zk: reply with xid %d, expected %d", h.xid, want)
	}
	r.err, r.zxid = fromCode(h.err), h.zxid
	decodeReply(&d, r)
	if d.err != nil {
		c.fail(r, ErrConnectionLoss)
		return d.err
	}
	if h.xid > 0 && h.zxid > 0 {
		// Only an ordinary request's reply, whole, moves the last zxid: the
		// server answers it after every packet sent before it, so every
		// event up to its zxid has been read. A setWatches reply carries
		// the server's newest zxid too, but vouches for its own packet
		// alone: were the connection lost before a later packet of the
		// restore was answered, that packet would be restored with the
		// newer zxid and the server would fire none of its watches for
		// the changes in between. Pings and auth replies vouch for
		// nothing either.
		c.lastZxid.Store(h.zxid)
	}
	if c.cfg.OnReply != nil {
		c.cfg.OnReply(r.sent, rd.cn.fr.readAt, r.xid, r.op, h.zxid, r.err)
	}
	return rd.settle(r)
}

// settle acts on what a reply means for the client, then completes its
// request.
func (rd *reader) settle(r *request) error {
	c := rd.c
	switch r.op {
	case opAuth:
		if r.err == ErrAuthFailed {
			c.complete(r)
			return errAuthFailedConn
		}
		if r.err == nil && r.internal {
			if rd.authsLeft--; rd.authsLeft == 0 {
				c.markReady(nil)
			}
		} else if r.err == nil {
			c.addCredential(Credential{Scheme: r.scheme, Auth: r.data})
		}
	case opSetWatches, opSetWatches2:
		if r.err != nil {
			c.log.Warn("zklock: zk: the server did not restore watches: they end", "err", r.err)
			rd.scratch = c.reg.failed(rd.scratch[:0], r.restore, r.err)
			c.deliver(rd.scratch)
		}
	case opRemoveWatches:
		if r.err == nil {
			// Watches linked now were set by requests sent before this
			// one: the server has just removed them.
			rd.scratch = c.reg.end(rd.scratch[:0], r.path, removedKinds[r.flags], ErrWatchRemoved)
			c.deliver(rd.scratch)
		}
	}
	c.complete(r)
	return nil
}

// decodeReply decodes the body of a reply into r; a failed request has
// none. It notes whether the server set the watch r asked for: on success,
// and for exists also when the node does not exist.
func decodeReply(d *decoder, r *request) {
	if r.op == opExists && r.watch != nil && r.err == ErrNoNode {
		r.watchSet = true
		r.watch.kind = WatchExist
		return
	}
	if r.err != nil {
		return
	}
	r.watchSet = r.watch != nil
	switch r.op {
	case opCreate2, opCreateContainer, opCreateTTL:
		r.rpath = d.string()
		d.stat(&r.stat)
	case opExists, opSetData, opSetACL:
		d.stat(&r.stat)
	case opGetData:
		r.rdata = d.buffer()
		d.stat(&r.stat)
	case opGetChildren2:
		r.children = d.strings()
		d.stat(&r.stat)
	case opGetACL:
		r.acls = d.acl()
		d.stat(&r.stat)
	case opSync:
		r.rpath = d.string()
	case opMulti:
		decodeMulti(d, r)
	}
}
