package zklock

import (
	"crypto/tls"
)

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
