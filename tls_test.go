package zklock_test

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
	"github.com/zklock/zklock/zktest"
)

// TestTLS: a server with a TLS client port is reached over TLS, where a lock
// works and the session learns the negotiated timeout from the plaintext
// inside; clients without TLS, without a client certificate or trusting
// another authority are refused.
func TestTLS(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithSelfSignedTLS())
	ctx := ctxFor(t)
	require.NotEmpty(t, c.SecureServers())
	require.NotEqual(t, c.Servers(), c.SecureServers())

	s := newSession(t, c.SecureServers(), zklock.WithTLS(c.TLSConfig()),
		zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	require.Equal(t, 2*time.Second, s.Timing().Timeout, "the wire observer saw the connect response")
	m, err := zklock.NewMutex(s, lockPath(t, "lock"))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	// The client certificate authenticated the session: an "auth" ACL
	// names its subject.
	acl, _, err := s.Client().GetACL(ctx, nodeOf(m.Guard()))
	require.NoError(t, err)
	require.Equal(t, []zk.ACL{{Perms: zk.PermAll, Scheme: "x509", ID: "CN=zktest-client"}}, acl)
	require.NoError(t, m.Unlock(ctx))

	noCert := c.TLSConfig()
	noCert.Certificates = nil
	otherCA := zktest.Start(t, zktest.WithSelfSignedTLS()).TLSConfig()
	refused := map[string][]zklock.SessionOption{
		"plain client on the TLS port": {zklock.WithServers(c.SecureServers()...)},
		"TLS client on the plain port": {zklock.WithServers(c.Servers()...), zklock.WithTLS(c.TLSConfig())},
		"no client certificate":        {zklock.WithServers(c.SecureServers()...), zklock.WithTLS(noCert)},
		"another authority":            {zklock.WithServers(c.SecureServers()...), zklock.WithTLS(otherCA)},
	}
	for name, opts := range refused {
		t.Run(name, func(t *testing.T) {
			sctx, cancel := context.WithTimeout(ctx, 3*time.Second)
			defer cancel()
			s, err := zklock.NewSession(sctx, append(opts, zklock.WithSessionTimeout(2*time.Second))...)
			if err == nil {
				s.Close()
				t.Fatal("session established")
			}
			require.ErrorIs(t, err, context.DeadlineExceeded)
		})
	}
}

// TestTLSComposesWithDialer: WithTLS runs over the connections WithDialer
// makes, here through a proxy that can reset them; the session reconnects
// over TLS.
func TestTLSComposesWithDialer(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithSelfSignedTLS())
	ctx := ctxFor(t)
	p := zktest.NewProxy(t, c.SecureServers())
	var dials atomic.Int32
	dialer := func(ctx context.Context, network, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	cfg := c.TLSConfig()
	cfg.ServerName = "127.0.0.1"
	s := newSession(t, p.Addrs(), zklock.WithTLS(cfg), zklock.WithDialer(dialer),
		zklock.WithSessionTimeout(10*time.Second))
	events, err := s.Subscribe(ctx)
	require.NoError(t, err)
	p.Reset()
	expect(t, events, 30*time.Second, zk.StateReconnected, zk.StateExpired)
	m, err := zklock.NewMutex(s, lockPath(t, "lock"))
	require.NoError(t, err)
	require.NoError(t, m.Lock(ctx))
	require.NoError(t, m.Unlock(ctx))
	require.GreaterOrEqual(t, dials.Load(), int32(2), "the session dialed through WithDialer")
}
