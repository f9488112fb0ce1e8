package zklock

import (
	"crypto/tls"
	"strings"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zk"
)

// WithDigestAuth authenticates the session with ZooKeeper's digest scheme
// as user with password ("user:password"), sent when the session is
// established and again after every reconnect, before any other request
// on the new connection. Unless WithACL is also given (in any order), it
// makes zk.AuthACL(zk.PermAll) the ACL of every node zklock
// creates: only sessions authenticated as the same user may read, change or
// delete them, or create nodes under a lock path that such a session created
// first.
//
// The user must be non-empty and free of ':'. The default is no
// authentication, and the ACL zk.WorldACL(zk.PermAll): anyone may delete a lock
// node.
func WithDigestAuth(user, password string) SessionOption {
	return func(o *sessionOptions) error {
		if user == "" || strings.Contains(user, ":") {
			return invalid("digest user %q: want a non-empty name without ':'", user)
		}
		o.creds = append(o.creds, client.Credential{Scheme: "digest", Auth: []byte(user + ":" + password)})
		if !o.aclSet {
			o.acl = toClientACL(zk.AuthACL(zk.PermAll))
		}
		return nil
	}
}

// WithTLS connects to the servers over TLS with cfg, which is cloned. When
// cfg.ServerName is empty, each server's host (from WithServers) is used to
// verify its certificate, as tls.Dial does. Give cfg.Certificates when the
// server requires client certificates (ZooKeeper's default, ssl.clientAuth
// =need); ZooKeeper's x509 provider then authenticates the session as
// "x509:<subject DN>", so zk.AuthACL(zk.PermAll) nodes belong to that subject.
//
// The TLS connection is made over whatever WithDialer dials (by default a
// plain TCP connection), so the two compose; the session observes the
// plaintext ZooKeeper protocol inside it. The handshake is bounded like
// ZooKeeper's own connect handshake: the session timeout divided among the
// servers, at most a quarter of it and at least 250ms. The default is no
// TLS. The servers must listen with TLS (ZooKeeper's secureClientPort).
func WithTLS(cfg *tls.Config) SessionOption {
	return func(o *sessionOptions) error {
		if cfg == nil {
			return invalid("nil TLS config")
		}
		o.tls = cfg.Clone()
		return nil
	}
}
