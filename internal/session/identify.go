package session

import (
	"context"
	"io"
	"net"

	"github.com/zklock/zklock/internal/client"
)

// An HTTP server written in Go (net/http, httptest) answers nothing to a
// connect request: it waits for the end of a request line, which the
// request's bytes never hold, so the attempt ends at the handshake timeout
// as one to a paused server does, and the server is never named for what
// it is. After such a silent attempt, the Dial asks the server once with a
// line an HTTP server must answer: "srvr", ZooKeeper's four-letter word,
// and the end of what the client sends. ZooKeeper answers it (or says it
// is not allowed) in its own words, or stays silent while paused: only a
// reply that begins "HTTP/" makes the server one that will never be
// ZooKeeper. (ZooKeeper reads a four-letter word whole before it looks at
// the end of the stream: its NIO server cancels the connection's read
// interest for netcat's sake.)

// speaksHTTP reports whether addr answers "srvr" and the end of the
// client's stream with an HTTP status line, within the handshake timeout.
func (c *Conn) speaksHTTP(ctx context.Context, addr string) bool {
	ctx, cancel := context.WithTimeout(ctx, HandshakeTimeout(c.cfg.Timeout, len(c.cfg.Servers)))
	defer cancel()
	dial := c.cfg.Dialer
	if dial == nil {
		var nd net.Dialer
		dial = nd.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return false
	}
	if c.cfg.TLS != nil {
		if nc, err = c.handshakeTLS(ctx, nc, addr); err != nil {
			return false
		}
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	if _, err := io.WriteString(nc, "srvr"); err != nil {
		return false
	}
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite() // without it, the probe ends at the timeout: nothing is lost
	}
	head := make([]byte, 5)
	_, err = io.ReadFull(nc, head)
	return err == nil && string(head) == "HTTP/"
}

// identify asks addr, after a silent attempt, whether it is an HTTP
// server, and tells a what it learned. It runs on the Conn's background
// context, so Close ends it.
func (c *Conn) identify(a *dialAttempts, addr string) {
	c.spawn(func() {
		if c.speaksHTTP(c.bg, addr) {
			a.identified(addr, &client.NotZooKeeperError{Head: "HTTP"})
		}
	})
}
