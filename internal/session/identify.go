package session

import (
	"context"
	"io"
	"net"
	"strings"
	"time"

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

// speaksHTTP returns the first bytes of addr's answer to "srvr" and the
// end of the client's stream when it is an HTTP server's (httpHead), ""
// otherwise, within the handshake timeout.
func (c *Conn) speaksHTTP(ctx context.Context, addr string) string {
	ctx, cancel := context.WithTimeout(ctx, HandshakeTimeout(c.cfg.Timeout, len(c.cfg.Servers)))
	defer cancel()
	dial := c.cfg.Dialer
	if dial == nil {
		var nd net.Dialer
		dial = nd.DialContext
	}
	nc, err := dial(ctx, "tcp", addr)
	if err != nil {
		return ""
	}
	if c.cfg.TLS != nil {
		if nc, err = c.handshakeTLS(ctx, nc, addr); err != nil {
			return ""
		}
	}
	defer nc.Close()
	stop := context.AfterFunc(ctx, func() { nc.Close() })
	defer stop()
	if _, err := io.WriteString(nc, "srvr"); err != nil {
		return ""
	}
	if cw, ok := nc.(interface{ CloseWrite() error }); ok {
		_ = cw.CloseWrite() // without it, the probe ends at the timeout: nothing is lost
	}
	head, _ := io.ReadAll(io.LimitReader(nc, 16)) // what came before an error counts
	return httpHead(string(head))
}

// httpHead returns the first four bytes of out if it is an HTTP server's
// answer: a status line, or, from a server that took the request for
// HTTP/0.9 (python3 -m http.server: no status line), an HTML error page.
// No ZooKeeper answer begins so. "" otherwise.
func httpHead(out string) string {
	lower := strings.ToLower(out)
	if strings.HasPrefix(out, "HTTP/") || strings.HasPrefix(lower, "<!doctype html") || strings.HasPrefix(lower, "<html") {
		return out[:4]
	}
	return ""
}

// probeAfter is how long a four-letter word (the survey's 'srvr', the
// 'conf' before a connect) may go unanswered before the server is also
// asked, on a connection of its own, whether it is an HTTP server:
// ZooKeeper answers in milliseconds, while an HTTP server written in Go or
// Python waits for a request line, and was asked only after a connect
// attempt had been silent for a whole handshake timeout (7.5s at the
// default session timeout; 15s for two such servers).
const probeAfter = 250 * time.Millisecond

// askWord asks addr the four-letter word cmd (fourLetter), and whether it
// is an HTTP server (speaksHTTP) if no answer came within probeAfter; head
// is the first bytes of an HTTP server's answer to either, "" if it gave
// none. An HTTP server's answer ends the question.
func (c *Conn) askWord(ctx context.Context, addr, cmd string) (out, head string, err error) {
	qctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type answer struct {
		out string
		err error
	}
	got := make(chan answer, 1)
	go func() {
		out, err := c.fourLetter(qctx, addr, cmd)
		got <- answer{out, err}
	}()
	t := time.NewTimer(probeAfter)
	defer t.Stop()
	select {
	case a := <-got:
		return a.out, httpHead(a.out), a.err
	case <-t.C:
	}
	probed := make(chan string, 1)
	go func() { probed <- c.speaksHTTP(qctx, addr) }()
	select {
	case a := <-got:
		cancel()
		<-probed
		return a.out, httpHead(a.out), a.err
	case head = <-probed:
		if head != "" {
			cancel()
			<-got
			return "", head, nil
		}
		a := <-got
		return a.out, httpHead(a.out), a.err
	}
}

// notZooKeeper tells a running Dial that the survey found addr to be an
// HTTP server.
func (c *Conn) notZooKeeper(addr, head string) {
	if a := c.attempts.Load(); a != nil {
		a.identifiedEarly(client.ServerAddrs([]string{addr})[0], &client.NotZooKeeperError{Head: head})
	}
}

// identify asks addr, after a silent attempt, whether it is an HTTP
// server, and tells a what it learned. It runs on the Conn's background
// context, so Close ends it.
func (c *Conn) identify(a *dialAttempts, addr string) {
	c.spawn(func() {
		if head := c.speaksHTTP(c.bg, addr); head != "" {
			a.identified(addr, &client.NotZooKeeperError{Head: head})
		}
	})
}
