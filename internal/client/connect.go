package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"sync/atomic"
	"time"
)

// conn is one established connection and what its handshake told.
type conn struct {
	nc        net.Conn
	fr        *frameReader
	addr      string
	sent      time.Time // when the connect request was written
	sessionID int64
	timeout   time.Duration
	password  []byte
	expired   bool // the server refused the session
	// replied is set once the reader has read a packet: the connection
	// served, beyond its handshake.
	replied atomic.Bool
}

// connect opens a connection to addr and runs the session handshake on
// it: dial, TLS if configured, then the connect request (resuming the
// current session, if any) and its response, all within the handshake
// timeout, and cut short by Close.
func (c *Client) connect(addr string, sid int64) (*conn, error) {
	ctx, cancel := context.WithTimeout(c.ctx, c.cfg.HandshakeTimeout)
	defer cancel()
	nc, err := c.cfg.Dialer(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	// Once ctx ends (the deadline, or Close), any read or write of the
	// handshake fails at once.
	stop := context.AfterFunc(ctx, func() { _ = nc.SetDeadline(time.Unix(1, 0)) })
	cn, err := c.handshake(ctx, nc, addr, sid)
	if !stop() || err != nil {
		nc.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, err
	}
	return cn, nil
}

func (c *Client) handshake(ctx context.Context, nc net.Conn, addr string, sid int64) (*conn, error) {
	if c.cfg.TLS != nil {
		cfg := c.cfg.TLS
		if cfg.ServerName == "" {
			cfg = cfg.Clone()
			cfg.ServerName, _, _ = net.SplitHostPort(addr)
		}
		tc := tls.Client(nc, cfg)
		if err := tc.HandshakeContext(ctx); err != nil {
			return nil, fmt.Errorf("zklock: zk: TLS handshake with %s: %w", addr, err)
		}
		nc = tc
	}
	req := connectRequest{lastZxid: c.lastZxid.Load(), timeout: c.cfg.Timeout, sessionID: sid, password: c.password}
	b, at := beginFrame(c.wbuf[:0])
	c.wbuf = endFrame(req.append(b), at)
	sent := time.Now()
	if _, err := nc.Write(c.wbuf); err != nil {
		return nil, err
	}
	fr := newFrameReader(nc, nil)
	fr.limit = c.cfg.MaxPacket + packetSlack
	body, err := fr.next()
	if err != nil {
		return nil, err
	}
	resp, err := decodeConnectResponse(body)
	if err != nil {
		return nil, fmt.Errorf("zklock: zk: connect response from %s: %w", addr, err)
	}
	cn := &conn{nc: nc, fr: fr, addr: addr, sent: sent,
		sessionID: resp.sessionID, timeout: resp.timeout, password: resp.password, expired: resp.expired()}
	return cn, nil
}

// readTimeout is how long the reader waits for a packet, as the Java
// client: two thirds of the session timeout, so that a server that fell
// silent is left while the session can still be resumed elsewhere.
func (cn *conn) readTimeout() time.Duration { return cn.timeout * 2 / 3 }

// pingEvery is how long the writer may stay silent before it pings: a
// third of the session timeout (half the read timeout, so a live server's
// answer comes in time), at most maxPing.
func (cn *conn) pingEvery() time.Duration { return min(cn.timeout/3, maxPing) }
