package client

import (
	"context"
	"errors"
	"fmt"
	"net"
	"time"
)

// run is the connection goroutine: it connects, serves each connection
// until it is lost, and reconnects, until Close or an authentication
// failure; then it shuts the client down.
func (c *Client) run() {
	defer close(c.done)
	var sid int64        // the session to resume; 0 for a new one
	outage := time.Now() // since when no server has heard from the session
	for c.ctx.Err() == nil && !c.closing() {
		addr, wait := c.hosts.pick()
		if wait > 0 && !c.sleep(wait) {
			break
		}
		if time.Since(outage) > c.outageLimit(sid) {
			c.unreachable(sid)
			sid, outage = 0, time.Now()
		}
		cn := c.attempt(addr, sid)
		if cn == nil {
			continue
		}
		if cn.expired {
			sid, outage = 0, time.Now()
			continue
		}
		if sid != 0 && time.Since(outage) > c.outageLimit(sid) {
			// A handshake begun before the limit and answered after it:
			// the session is given up by now, whatever this server says.
			c.abandon(cn)
			c.unreachable(sid)
			sid, outage = 0, time.Now()
			continue
		}
		if sid != 0 && cn.sessionID != sid {
			// The server answered a resume with another session: the old
			// one is gone for this client, as if refused. It is expired
			// before anything is restored, so nothing of it moves into
			// the new session.
			c.expire(addr, sid, fmt.Errorf("%w: resumed as session 0x%x", ErrSessionExpired, cn.sessionID))
		}
		sid = cn.sessionID
		began := time.Now()
		err := c.serve(cn)
		outage = time.Now() // the last the server heard was on cn, sent before now
		c.hosts.ended(cn.replied.Load(), outage.Sub(began))
		if errors.Is(err, errAuthFailedConn) {
			c.authFailed(cn.addr)
			break
		}
		if c.closing() || c.ctx.Err() != nil {
			break
		}
		c.log.Info("zklock: zk: connection lost", "server", addr, "session", fmt.Sprintf("0x%x", sid), "err", err)
		c.state(StateDisconnected, StateInfo{Server: addr, SessionID: sid, Err: err})
	}
	c.shutdown()
}

// attempt connects to addr to resume session sid (0: a new one). It
// returns nil if the attempt failed, and a closed conn marked expired if
// the server refused to resume the session (the session has ended then).
func (c *Client) attempt(addr string, sid int64) *conn {
	cn, err := c.connect(addr, sid)
	if err != nil {
		c.attemptFailed(addr, sid, err)
		return nil
	}
	if cn.expired && sid == 0 {
		cn.nc.Close()
		c.attemptFailed(addr, sid, fmt.Errorf("zklock: zk: %s refused a new session", addr))
		return nil
	}
	if cn.expired {
		c.hosts.served() // the server answered: it refused the session
		cn.nc.Close()
		c.expire(addr, sid, nil)
	}
	return cn
}

// abandon leaves a connection whose server has just resumed a session the
// client has given up: it asks the server to close the session
// (closeSession, unanswered: its ephemeral nodes go now, not a timeout
// after this handshake), then closes the connection. A request written
// before the close is read by the server before it sees the end of the
// stream; if the write fails, the session expires on its own.
func (c *Client) abandon(cn *conn) {
	r := newRequest(opCloseSession, "")
	c.xid++
	if c.xid <= 0 {
		c.xid = 1
	}
	r.xid = c.xid
	c.wbuf = appendRequest(c.wbuf[:0], r)
	release(r)
	_ = cn.nc.SetWriteDeadline(time.Now().Add(c.cfg.HandshakeTimeout))
	if _, err := cn.nc.Write(c.wbuf); err != nil {
		c.log.Debug("zklock: zk: closeSession of an abandoned session not sent", "server", cn.addr, "err", err)
	}
	cn.nc.Close()
}

func (c *Client) closing() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.closeErr != nil
}

// sleep waits d, or until Close; it reports whether d passed.
func (c *Client) sleep(d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-c.ctx.Done():
		return false
	}
}

func (c *Client) state(s State, info StateInfo) {
	if c.cfg.OnState != nil {
		c.cfg.OnState(s, info)
	}
}

func (c *Client) attemptFailed(addr string, sid int64, err error) {
	if c.ctx.Err() != nil {
		return
	}
	c.mu.Lock()
	c.lastErr = err
	c.mu.Unlock()
	c.log.Debug("zklock: zk: connection attempt failed", "server", addr, "err", err)
	c.state(StateDisconnected, StateInfo{Server: addr, SessionID: sid, Err: err})
}

// authFailed makes an authentication failure final, as in ZooKeeper's
// Java client: the credential would be refused again on every connection.
func (c *Client) authFailed(addr string) {
	c.mu.Lock()
	if c.closeErr == nil {
		c.closeErr = ErrAuthFailed
	}
	c.mu.Unlock()
	c.log.Warn("zklock: zk: the server rejected a credential: the client closes", "server", addr)
	c.markReady(ErrAuthFailed)
	c.state(StateAuthFailed, StateInfo{Server: addr, SessionID: c.sessionID.Load(), Err: ErrAuthFailed})
}

// shutdown fails what is left, ends every watch, and reports StateClosed.
func (c *Client) shutdown() {
	c.mu.Lock()
	if c.closeErr == nil {
		c.closeErr = ErrClosed
	}
	err := c.closeErr
	queued := c.takeQueueLocked()
	c.mu.Unlock()
	for _, r := range queued {
		c.fail(r, err)
	}
	c.deliver(c.reg.endAll(nil, err))
	c.markReady(err)
	c.state(StateClosed, StateInfo{SessionID: c.sessionID.Load()})
}

// serve runs an established connection until it is lost or the client
// closes: it reports StateConnected, starts the reader, then writes, first
// the credentials and the watches to restore, then every queued request.
// When it returns, the connection is closed, the reader has ended and
// every request in flight has failed with ErrConnectionLoss (ErrClosed if
// the client is closing, ErrAuthFailed if the server refused a credential).
func (c *Client) serve(cn *conn) error {
	c.sessionID.Store(cn.sessionID)
	c.timeout.Store(int64(cn.timeout))
	c.password = cn.password
	c.log.Info("zklock: zk: connected", "server", cn.addr, "session", fmt.Sprintf("0x%x", cn.sessionID), "timeout", cn.timeout)
	c.state(StateConnected, StateInfo{Server: cn.addr, SessionID: cn.sessionID, Timeout: cn.timeout, Sent: cn.sent})
	prime, auths := c.priming()
	if auths == 0 {
		c.markReady(nil)
	}
	c.connected.Store(true)
	// Close must not wait for a write or read blocked on a dead peer.
	stop := context.AfterFunc(c.ctx, func() { cn.nc.Close() })
	defer stop()
	rd := &reader{c: c, cn: cn, authsLeft: auths, done: make(chan struct{})}
	go rd.run()
	err := c.writeLoop(cn, prime, rd.done)
	c.connected.Store(false)
	select {
	case <-rd.done:
		err = rd.err // the reader ended first: it saw the cause
	default:
	}
	cn.nc.Close()
	<-rd.done
	if errors.Is(err, net.ErrClosed) && rd.err != nil {
		// The reader closed the connection (a read deadline, a bad
		// packet) while the writer was writing, before it signalled its
		// end: the reader's error is the cause.
		err = rd.err
	}
	lost := ErrConnectionLoss
	switch {
	case errors.Is(rd.err, errAuthFailedConn):
		// The server refused a credential: final, as in the Java client,
		// whose requests in flight then fail with AUTHFAILED. Connection
		// loss would tell their callers to retry.
		err, lost = rd.err, ErrAuthFailed
	case c.closing():
		lost = ErrClosed
	}
	c.in.drain(func(r *request) { c.fail(r, lost) })
	return err
}

// priming returns the requests a new connection sends first: an auth
// packet per credential, then setWatches requests for every watch the
// session holds, with the last zxid read (so the server fires those whose
// node changed since); or, when there are none, a ping, so that a
// connection that serves shows it within a round trip (the reconnect
// pacing counts a connection that carried no reply as a failed attempt).
// auths is how many auth packets there are.
func (c *Client) priming() (rs []*request, auths int) {
	c.mu.Lock()
	creds := c.creds
	c.mu.Unlock()
	for _, cr := range creds {
		r := newRequest(opAuth, "")
		r.xid, r.scheme, r.data, r.internal = xidAuth, cr.Scheme, cr.Auth, true
		rs = append(rs, r)
	}
	for _, rest := range c.reg.restores(c.lastZxid.Load()) {
		r := newRequest(rest.opcode(), "")
		r.xid, r.restore, r.internal = xidSetWatches, rest, true
		rs = append(rs, r)
	}
	if len(rs) == 0 {
		r := newRequest(opPing, "")
		r.xid, r.internal = xidPing, true
		rs = append(rs, r)
	}
	return rs, len(creds)
}

// deliver queues each delivery's event on its watch and tells OnWatch.
func (c *Client) deliver(ds []delivery) {
	for i := range ds {
		d := &ds[i]
		if d.w.push(d.ev, d.final) && c.cfg.OnWatch != nil {
			c.cfg.OnWatch(d.ev)
		}
		*d = delivery{}
	}
}
