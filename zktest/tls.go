package zktest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"time"
)

// WithSelfSignedTLS gives every server a TLS client port (ZooKeeper's
// secureClientPort, served by Netty) beside its plain one, with
// certificates made for the cluster: a throwaway certificate authority, a
// server certificate for 127.0.0.1 and a client certificate, written as PEM
// files (ZooKeeper 3.8 reads PEM key and trust stores) into the cluster's
// temporary directory. The servers require a client certificate signed by
// that authority (ZooKeeper's default, ssl.clientAuth=need), and
// authenticate its holder as "x509:CN=zktest-client".
//
// Cluster.SecureServers gives the TLS addresses and Cluster.TLSConfig a
// client configuration that trusts the authority and presents the client
// certificate. Servers stays the plain addresses, which zktest itself uses
// to check the servers. The default is no TLS port. TLS needs a local
// installation: with ZKTEST_SERVERS or Docker, Start fails the test.
func WithSelfSignedTLS() Option {
	return func(o *options) { o.tls = true }
}

// tlsFiles are the PEM files a TLS cluster's servers read, and what a client
// needs to talk to them.
type tlsFiles struct {
	keyStore   string // server certificate and key
	trustStore string // the authority
	clientCert string // the client certificate and its key, for a client that reads files
	clientKey  string
	client     tls.Certificate
	roots      *x509.CertPool
}

// clientCN is the subject of the client certificate, hence the x509 id of
// the sessions that present it.
const clientCN = "zktest-client"

// newTLSFiles makes an authority, a server and a client certificate, and
// writes the server's key store and trust store into dir.
func newTLSFiles(dir string) (*tlsFiles, error) {
	caKey, caCert, caDER, err := newAuthority()
	if err != nil {
		return nil, err
	}
	srv, srvKey, err := newLeaf(caCert, caKey, "zktest-server", x509.ExtKeyUsageServerAuth)
	if err != nil {
		return nil, err
	}
	cli, cliKey, err := newLeaf(caCert, caKey, clientCN, x509.ExtKeyUsageClientAuth)
	if err != nil {
		return nil, err
	}
	f := &tlsFiles{
		keyStore:   filepath.Join(dir, "server-keystore.pem"),
		trustStore: filepath.Join(dir, "ca.pem"),
		clientCert: filepath.Join(dir, "client.pem"),
		clientKey:  filepath.Join(dir, "client-key.pem"),
		roots:      x509.NewCertPool(),
	}
	f.roots.AddCert(caCert)
	if f.client, err = tls.X509KeyPair(pemBlock("CERTIFICATE", cli), pemBlock("PRIVATE KEY", cliKey)); err != nil {
		return nil, fmt.Errorf("zktest: client key pair: %w", err)
	}
	keyStore := append(pemBlock("CERTIFICATE", srv), pemBlock("PRIVATE KEY", srvKey)...)
	if err := os.WriteFile(f.keyStore, keyStore, 0o600); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.trustStore, pemBlock("CERTIFICATE", caDER), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.clientCert, pemBlock("CERTIFICATE", cli), 0o644); err != nil {
		return nil, err
	}
	if err := os.WriteFile(f.clientKey, pemBlock("PRIVATE KEY", cliKey), 0o600); err != nil {
		return nil, err
	}
	return f, nil
}

func newAuthority() (*ecdsa.PrivateKey, *x509.Certificate, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, nil, err
	}
	tmpl := certTemplate("zktest CA")
	tmpl.IsCA, tmpl.BasicConstraintsValid = true, true
	tmpl.KeyUsage = x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return nil, nil, nil, fmt.Errorf("zktest: CA certificate: %w", err)
	}
	cert, err := x509.ParseCertificate(der)
	return key, cert, der, err
}

// newLeaf returns a certificate for 127.0.0.1 signed by ca, and its PKCS#8
// key, both DER.
func newLeaf(ca *x509.Certificate, caKey *ecdsa.PrivateKey, cn string, usage x509.ExtKeyUsage) ([]byte, []byte, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, nil, err
	}
	tmpl := certTemplate(cn)
	tmpl.KeyUsage = x509.KeyUsageDigitalSignature
	tmpl.ExtKeyUsage = []x509.ExtKeyUsage{usage}
	tmpl.IPAddresses = []net.IP{net.IPv4(127, 0, 0, 1)}
	tmpl.DNSNames = []string{"localhost"}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return nil, nil, fmt.Errorf("zktest: %s certificate: %w", cn, err)
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	return der, keyDER, err
}

func certTemplate(cn string) *x509.Certificate {
	serial, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return &x509.Certificate{
		SerialNumber: serial,
		Subject:      pkix.Name{CommonName: cn},
		NotBefore:    time.Now().Add(-time.Hour), // tolerate clock skew
		NotAfter:     time.Now().Add(7 * 24 * time.Hour),
	}
}

func pemBlock(typ string, der []byte) []byte {
	return pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der})
}

// tlsConfigLines are the zoo.cfg lines of a TLS client port. Keys ZooKeeper
// does not know as zoo.cfg settings (ssl.*, authProvider.*) become system
// properties prefixed "zookeeper.", which is where Netty's TLS setup and the
// x509 provider read them.
func tlsConfigLines(f *tlsFiles, port int) []string {
	return []string{
		"secureClientPort=" + strconv.Itoa(port),
		"secureClientPortAddress=127.0.0.1",
		"serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory",
		"ssl.keyStore.location=" + f.keyStore,
		"ssl.keyStore.type=PEM",
		"ssl.trustStore.location=" + f.trustStore,
		"ssl.trustStore.type=PEM",
		"authProvider.x509=org.apache.zookeeper.server.auth.X509AuthenticationProvider",
	}
}

// SecureServers returns the TLS client address ("127.0.0.1:port") of every
// server, in server order, or nil unless the cluster was started with
// WithSelfSignedTLS.
func (c *Cluster) SecureServers() []string {
	if c.tls == nil {
		return nil
	}
	addrs := make([]string, len(c.servers))
	for i, s := range c.servers {
		addrs[i] = s.secureAddr
	}
	return addrs
}

// TLSConfig returns a new client TLS configuration for SecureServers: it
// trusts only the cluster's authority and presents a client certificate
// that the servers accept (authenticated as "x509:CN=zktest-client"). It
// returns nil unless the cluster was started with WithSelfSignedTLS.
func (c *Cluster) TLSConfig() *tls.Config {
	if c.tls == nil {
		return nil
	}
	return &tls.Config{
		RootCAs:      c.tls.roots,
		Certificates: []tls.Certificate{c.tls.client},
		MinVersion:   tls.VersionTLS12,
	}
}

// TLSFiles returns the PEM files of TLSConfig, for a client that reads
// files (zklock --tls-ca CA --tls-cert CERT --tls-key KEY): the authority
// that signed the servers' certificates, the client certificate and its
// key. They are removed with the cluster. It returns "" for each unless the
// cluster was started with WithSelfSignedTLS.
func (c *Cluster) TLSFiles() (ca, cert, key string) {
	if c.tls == nil {
		return "", "", ""
	}
	return c.tls.trustStore, c.tls.clientCert, c.tls.clientKey
}
