package client

import (
	"fmt"
	"time"
)

// outageLimit is how long the client tries to resume session sid before
// it expires it locally: twice its timeout, from the end of its last
// connection. The server's clock for the session restarted at the last
// packet it read from the client, which was sent on that connection (a
// refused attempt does not touch the session). A ZooKeeper server expires
// sessions in tick-sized buckets (ExpiryQueue.roundToNextInterval: the
// next tick boundary after last touch + timeout), so up to one tick after
// the timeout; it grants no timeout below minSessionTimeout, by default
// two ticks, so a tick is at most half the timeout and the server expires
// the session by 1.5 times its timeout. The last half timeout (at least
// a tick) is slack for the expiry's own processing (the closeSession
// that deletes the ephemeral nodes). So by then every server that has
// been counting has expired the session (one that has not been counting,
// an ensemble without a quorum throughout, may still hold it, see
// unreachable). Caveats: a server configured with minSessionTimeout below
// two ticks may grant a timeout shorter than two ticks, and hold the
// session past the limit; an attempt whose connect response was lost may
// have resumed the session on its server, which then holds it up to that
// attempt's handshake timeout longer (a resume answered after the limit
// is not taken: run asks its server to close the session, see abandon).
// Either way the session layer ended
// the session's holds earlier, at its own deadline: the limit decides
// only when the client starts a new session.
func (c *Client) outageLimit(sid int64) time.Duration {
	if t := c.Timeout(); sid != 0 && t > 0 {
		return 2 * t
	}
	return c.cfg.Timeout // no session to wait for: only the last zxid is forgotten
}

// unreachable handles an outage longer than outageLimit: no
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
	c.log.Warn("zklock: zk: no server resumed the session within twice its timeout: it is expired locally",
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
