package client

import (
	"fmt"
	"time"
)

// outageLimit is how long the client tries to resume session sid before
// it expires it locally: its timeout, from the end of its last connection.
// The server's clock for the session restarted at the last packet it read
// from the client, which was sent on that connection (a refused attempt
// does not touch the session); so by then every server that has been
// counting has expired the session (one that has not been counting, an
// ensemble without a quorum throughout, may still hold it, see
// unreachable). One exception: an attempt whose connect response was
// lost may have resumed the session on its server, which then holds it up
// to that attempt's handshake timeout longer. Either way the session
// layer ended the session's holds earlier, at its own deadline.
func (c *Client) outageLimit(sid int64) time.Duration {
	if t := c.Timeout(); sid != 0 && t > 0 {
		return t
	}
	return c.cfg.Timeout
}

// unreachable handles an outage longer than the session's timeout: no
// server served the client since, so the session is expired locally, as
// if a server had said so, and the next connection begins a new session.
// The last zxid is forgotten too: a server behind it refuses any
// connection ("client has seen zxid"), and one may be all that is left;
// a new session need not have seen what the old one did.
func (c *Client) unreachable(sid int64) {
	c.lastZxid.Store(0)
	if sid == 0 {
		return
	}
	c.log.Warn("zklock: zk: no server resumed the session within its timeout: it is expired locally",
		"session", fmt.Sprintf("0x%x", sid), "timeout", c.outageLimit(sid))
	c.expire("", sid, ErrExpiredLocally)
}

// expire handles the end of session sid, refused by the server at addr,
// or expired locally (err): requests still queued for it fail, every
// watch ends, and the next connection begins a new session. A request
// queued from now on runs in the new session.
func (c *Client) expire(addr string, sid int64, err error) {
	c.log.Info("zklock: zk: session expired", "server", addr, "session", fmt.Sprintf("0x%x", sid))
	c.password = nil
	c.mu.Lock()
	queued := c.takeQueueLocked()
	c.mu.Unlock()
	for _, r := range queued {
		c.fail(r, ErrSessionExpired)
	}
	c.deliver(c.reg.endAll(nil, ErrSessionExpired))
	c.state(StateExpired, StateInfo{Server: addr, SessionID: sid, Err: err})
}
