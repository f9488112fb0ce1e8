package zklock

import (
	"context"
	"crypto/tls"
	"fmt"
	"net"
	"strings"
	"time"

	"github.com/go-zookeeper/zk"
)

// WithDigestAuth authenticates the session with ZooKeeper's digest scheme
// as user with password ("user:password"), sent when the session is
// established and again by go-zookeeper after every reconnect, before any
// other request on the new connection. Unless WithACL is also given (in any
// order), it makes zk.AuthACL(zk.PermAll) the ACL of every node zklock
// creates: only sessions authenticated as the same user may read, change or
// delete them, or create nodes under a lock path that such a session created
// first.
//
// The user must be non-empty and free of ':'. The default is no
// authentication, and the ACL zk.WorldACL(zk.PermAll): anyone may delete a
// lock node.
func WithDigestAuth(user, password string) SessionOption {
	return func(o *sessionOptions) error {
		if user == "" || strings.Contains(user, ":") {
			return invalid("digest user %q: want a non-empty name without ':'", user)
		}
		o.creds = append(o.creds, credential{"digest", []byte(user + ":" + password)})
		if !o.aclSet {
			o.acl = zk.AuthACL(zk.PermAll)
		}
		return nil
	}
}

// WithTLS connects to the servers over TLS with cfg, which is cloned. When
// cfg.ServerName is empty, each server's host (from WithServers) is used to
// verify its certificate, as tls.Dial does. Give cfg.Certificates when the
// server requires client certificates (ZooKeeper's default, ssl.clientAuth
// =need); ZooKeeper's x509 provider then authenticates the session as
// "x509:<subject DN>", so zk.AuthACL(zk.PermAll) nodes belong to that
// subject.
//
// The TLS connection is made over whatever WithDialer dials (by default a
// plain TCP connection), so the two compose; the session observes the
// plaintext ZooKeeper protocol inside it. The handshake is bounded like
// ZooKeeper's own connect handshake: the session timeout divided among the
// servers, and at least 500ms. The default is no TLS. The servers must
// listen with TLS (ZooKeeper's secureClientPort).
func WithTLS(cfg *tls.Config) SessionOption {
	return func(o *sessionOptions) error {
		if cfg == nil {
			return invalid("nil TLS config")
		}
		o.tls = cfg.Clone()
		return nil
	}
}

// handshakeTLS runs the TLS client handshake on c within d; on failure c is
// closed.
func (s *Session) handshakeTLS(c net.Conn, addr string, d time.Duration) (net.Conn, error) {
	cfg := s.opts.tls
	if cfg.ServerName == "" {
		host, _, err := net.SplitHostPort(addr)
		if err != nil {
			host = addr
		}
		cfg = cfg.Clone()
		cfg.ServerName = host
	}
	tc := tls.Client(c, cfg)
	ctx, cancel := context.WithTimeout(s.bg, d)
	defer cancel()
	if err := tc.HandshakeContext(ctx); err != nil {
		c.Close()
		return nil, fmt.Errorf("zklock: TLS handshake with %s: %w", addr, err)
	}
	return tc, nil
}
