package client_test

import (
	"context"
	"crypto/tls"
	"errors"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// TestTLS: the same protocol over TLS, with a client certificate the
// server authenticates: a node whose ACL grants the certificate's x509
// identity alone is readable over TLS and refused to a plain connection.
// A client that does not trust the server's certificate never connects.
func TestTLS(t *testing.T) {
	zk := startServer(t, zktest.WithSelfSignedTLS())
	st := newStates()
	c := dial(t, zk.SecureServers(), client.Config{TLS: zk.TLSConfig(), OnState: st.on})
	ctx := bounded(t)
	acl := []client.ACL{{Perms: client.PermAll, Scheme: "x509", ID: "CN=zktest-client"}}
	if _, _, err := c.Create(ctx, "/cert-only", []byte("x"), client.ModePersistent, acl); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW(ctx, "/cert-only")
	if err != nil {
		t.Fatalf("get over TLS: %v", err)
	}
	if info, _ := st.last(client.StateConnected); info.Server != zk.SecureServers()[0] {
		t.Fatalf("connected to %q", info.Server)
	}
	if _, err := c.Set(ctx, "/cert-only", []byte("y"), -1); err != nil {
		t.Fatal(err)
	}
	expect(t, next(t, w), client.EventNodeDataChanged, "/cert-only", client.WatchData)

	plain := dial(t, zk.Servers(), client.Config{})
	if _, _, err := plain.Get(ctx, "/cert-only"); !errors.Is(err, client.ErrNoAuth) {
		t.Fatalf("get without the certificate: %v, want ErrNoAuth", err)
	}

	untrusting := zk.TLSConfig()
	untrusting.RootCAs = nil
	untrusting.InsecureSkipVerify = false
	short := newStates()
	// 5s, not a second: the ctx must outlast one refused
	// handshake, which at load 30 in make test took longer than a second
	// (no attempt was reported).
	handshakeCtx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err = client.Dial(handshakeCtx, client.Config{Servers: zk.SecureServers(), Timeout: testTimeout, TLS: untrusting, OnState: short.on})
	if err == nil {
		t.Fatal("connected to a server whose certificate is not trusted")
	}
	var bad *tls.CertificateVerificationError
	if info, ok := short.last(client.StateDisconnected); !ok || !errors.As(info.Err, &bad) {
		t.Fatalf("the failed TLS handshake was not reported as such: %+v", info)
	}
	if !errors.As(err, &bad) || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Dial's error does not carry the cause and the ctx: %v", err)
	}
}
