package zktest

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"testing"
)

// The generated material is what ZooKeeper and a client need: a key store
// with a server certificate for 127.0.0.1, a trust store with the authority,
// and a client certificate the authority signed for client auth.
func TestNewTLSFiles(t *testing.T) {
	f, err := newTLSFiles(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ks, err := os.ReadFile(f.keyStore)
	if err != nil {
		t.Fatal(err)
	}
	server, err := tls.X509KeyPair(ks, ks)
	if err != nil {
		t.Fatalf("key store: %v", err)
	}
	if _, err := server.Leaf.Verify(x509.VerifyOptions{Roots: f.roots, DNSName: "127.0.0.1",
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}}); err != nil {
		t.Fatalf("server certificate: %v", err)
	}
	ts, err := os.ReadFile(f.trustStore)
	if err != nil {
		t.Fatal(err)
	}
	fromFile := x509.NewCertPool()
	if !fromFile.AppendCertsFromPEM(ts) {
		t.Fatal("trust store holds no certificate")
	}
	client := f.client.Leaf
	if client == nil {
		if client, err = x509.ParseCertificate(f.client.Certificate[0]); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := client.Verify(x509.VerifyOptions{Roots: fromFile,
		KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Fatalf("client certificate: %v", err)
	}
	if client.Subject.CommonName != clientCN {
		t.Fatalf("client CN %q", client.Subject.CommonName)
	}
}
