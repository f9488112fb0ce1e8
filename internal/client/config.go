package client

import (
	"context"
	"crypto/tls"
	"fmt"
	"log/slog"
	"net"
	"slices"
	"strings"
	"time"
)

// Credential is an authentication (scheme and auth data, for example
// "digest" and "user:password") the client sends on every connection.
type Credential struct {
	Scheme string
	Auth   []byte
}

// Config is what Dial needs. Servers and Timeout are required; every other
// field has the default its comment states.
//
// The hooks are called synchronously from the client's own goroutines, one
// at a time and in the order of what they report; they must return quickly
// and must not call the Client (a request from a hook would wait for the
// goroutine that is running the hook).
type Config struct {
	// Servers are "host:port" addresses (":2181" is added to a bare
	// host). Names are resolved by the dialer at each attempt. The client
	// tries them in a random order.
	Servers []string
	// Timeout is the session timeout to ask for; the server grants one
	// between its minSessionTimeout and maxSessionTimeout.
	Timeout time.Duration
	// Dialer opens a connection. Default: a net.Dialer's DialContext. Its
	// ctx ends at the handshake deadline or when the client closes.
	Dialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// TLS, if not nil, makes every connection a TLS client connection
	// over the dialed one (ServerName defaults to the server's host). Put
	// client certificates in it for servers that authenticate them.
	TLS *tls.Config
	// Credentials are sent on every connection, before any request.
	Credentials []Credential
	// HandshakeTimeout bounds one attempt to connect: dial, TLS handshake
	// and the session handshake. Default: the session timeout divided
	// among the servers, at most a quarter of it, at least 250ms.
	HandshakeTimeout time.Duration
	// MaxReconnectDelay bounds the pause between rounds of attempts to
	// connect (every server tried once), which doubles from 50ms after
	// each round in which none served: a connection counts only once it
	// carried a reply beyond the connect response and lived at least
	// MaxReconnectDelay, so no server is reconnected to more often than
	// about once per MaxReconnectDelay. Default: 1s. A client that must be
	// back the moment its server is (an observer of a lone server) sets it
	// lower.
	MaxReconnectDelay time.Duration
	// MaxPacket is the servers' jute.maxbuffer. A packet from a server
	// longer than MaxPacket plus 1 KiB (the Stat and header a reply adds
	// to the largest request) is taken for a broken stream: the
	// connection is left, as ZooKeeper's Java client leaves one whose
	// packet is longer than its jute.maxbuffer. A listing of children is
	// bounded by nothing else: one that long (about 17,000 names of
	// zklock's length at the default) fails with ErrConnectionLoss on
	// every connection, as in the Java client. Default: DefaultMaxPacket;
	// at most MaxMaxPacket.
	MaxPacket int
	// Logger receives the client's log lines. Default: none.
	Logger *slog.Logger

	// OnState is told of every State (see State for each).
	OnState func(State, StateInfo)
	// OnReply is told of every reply to a request, before the request
	// returns: pings, authentication and watch restoration included. sent
	// is when the request's bytes were handed to the socket write,
	// received when the read that completed the reply returned; xid and
	// opcode are the request's, zxid the reply's, err its error (nil for
	// success). A request that gets no reply (its connection was lost) is
	// not reported.
	OnReply func(sent, received time.Time, xid, opcode int32, zxid int64, err error)
	// OnWatch is told of every event delivered to a watch, as Watch.Next
	// returns it, right after the event is queued on the Watch: node
	// events in the order the server sent them, and the end of watches on
	// expiry, Close, an authentication failure or a failed restoration
	// (the end of a watch by Watch.Remove is not reported).
	OnWatch func(Event)
}

// withDefaults validates c and returns it with its defaults filled in.
func (c Config) withDefaults() (Config, error) {
	if len(c.Servers) == 0 {
		return c, fmt.Errorf("%w: no servers", ErrInvalidConfig)
	}
	if c.Timeout <= 0 {
		return c, fmt.Errorf("%w: session timeout %v", ErrInvalidConfig, c.Timeout)
	}
	servers := ServerAddrs(c.Servers)
	if slices.Contains(servers, "") {
		return c, fmt.Errorf("%w: empty server address", ErrInvalidConfig)
	}
	c.Servers = servers
	if c.Dialer == nil {
		var d net.Dialer
		c.Dialer = d.DialContext
	}
	if c.HandshakeTimeout <= 0 {
		c.HandshakeTimeout = max(min(c.Timeout/time.Duration(len(servers)), c.Timeout/4), 250*time.Millisecond)
	}
	if c.MaxPacket == 0 {
		c.MaxPacket = DefaultMaxPacket
	}
	if c.MaxPacket < 0 || c.MaxPacket > MaxMaxPacket {
		return c, fmt.Errorf("%w: max packet %d not from 1 to %d", ErrInvalidConfig, c.MaxPacket, MaxMaxPacket)
	}
	if c.MaxReconnectDelay <= 0 {
		c.MaxReconnectDelay = backoffMax
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	for _, cr := range c.Credentials {
		if cr.Scheme == "" {
			return c, fmt.Errorf("%w: credential without a scheme", ErrInvalidConfig)
		}
	}
	c.Credentials = append([]Credential(nil), c.Credentials...)
	return c, nil
}

// ServerAddrs returns servers as the client names them (in StateInfo, its
// errors and logs): white space trimmed, port 2181 where none is given;
// "" for an empty one.
func ServerAddrs(servers []string) []string {
	out := make([]string, len(servers))
	for i, s := range servers {
		s = strings.TrimSpace(s)
		if _, _, err := net.SplitHostPort(s); err != nil && s != "" {
			s = net.JoinHostPort(s, "2181")
		}
		out[i] = s
	}
	return out
}
