package main

import (
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// The environment variables the security flags default to, as
// docs/security.md names them. A password is never printed: not in an
// error, the help, a log line, nor on the command line of the processes
// zklock starts (the supervisor's is "zkl-supervise __supervise
// --deadline N --grace N -- CMD...").
const (
	envAuth     = "ZK_AUTH"      // USER:PASSWORD, as --auth
	envAuthFile = "ZK_AUTH_FILE" // as --auth-file
	envTLSCA    = "ZK_TLS_CA"    // as --tls-ca
	envTLSCert  = "ZK_TLS_CERT"  // as --tls-cert
	envTLSKey   = "ZK_TLS_KEY"   // as --tls-key
)

// secFlags are the flags that reach a secured ensemble: TLS
// (zklock.WithTLS) and digest authentication (zklock.WithAuth, with
// creator-only nodes: zk.AuthACL).
type secFlags struct {
	tlsCA, tlsCert, tlsKey string
	auth, authFile         string
}

func (f *secFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.tlsCA, "tls-ca", "", "connect over TLS, trusting the certificate authorities in PEM `FILE` "+
		"(default $"+envTLSCA+"; without it and with --tls-cert, the system's)")
	fs.StringVar(&f.tlsCert, "tls-cert", "", "connect over TLS with the client certificate in PEM `FILE`, "+
		"with --tls-key (default $"+envTLSCert+")")
	fs.StringVar(&f.tlsKey, "tls-key", "", "the client certificate's key, PEM `FILE` (default $"+envTLSKey+")")
	fs.StringVar(&f.auth, "auth", "", "digest authentication as `USER:PASSWORD` (visible to ps: prefer "+
		"--auth-file or $"+envAuth+"); nodes zklock creates are then the user's alone")
	fs.StringVar(&f.authFile, "auth-file", "", "digest authentication as the USER:PASSWORD in `FILE` "+
		"(default $"+envAuthFile+", or $"+envAuth+" itself)")
}

// secOptions are the session options of secFlags, and for messages the
// user and where the credentials came from.
type secOptions struct {
	opts     []zklock.SessionOption
	user     string
	credFrom string
}

// options reads the files and the environment. Its errors name the flag or
// variable at fault, never the credential.
func (f *secFlags) options() (secOptions, error) {
	var so secOptions
	cred, err := f.credential(&so)
	if err != nil {
		return so, err
	}
	if cred != "" {
		user, pass, ok := strings.Cut(cred, ":")
		if !ok || user == "" {
			return so, fmt.Errorf("%s: want USER:PASSWORD", so.credFrom)
		}
		so.user = user
		// Creator-only nodes, as --auth's help says: only the same user
		// may touch what this process creates.
		so.opts = append(so.opts, zklock.WithAuth("digest", []byte(user+":"+pass)),
			zklock.WithACL(zk.AuthACL(zk.PermAll)...))
	}
	cfg, err := f.tlsConfig()
	if err != nil {
		return so, err
	}
	if cfg != nil {
		so.opts = append(so.opts, zklock.WithTLS(cfg))
	}
	return so, nil
}

// credential returns USER:PASSWORD from --auth, --auth-file, $ZK_AUTH or
// $ZK_AUTH_FILE, the first given; "" for none.
func (f *secFlags) credential(so *secOptions) (string, error) {
	if f.auth != "" && f.authFile != "" {
		return "", errors.New("give --auth or --auth-file, not both")
	}
	switch {
	case f.auth != "":
		so.credFrom = "--auth"
		return f.auth, nil
	case f.authFile != "":
		so.credFrom = "--auth-file " + f.authFile
		return readCredential(f.authFile, "--auth-file")
	case os.Getenv(envAuth) != "":
		so.credFrom = "$" + envAuth
		return os.Getenv(envAuth), nil
	case os.Getenv(envAuthFile) != "":
		so.credFrom = "$" + envAuthFile + " (" + os.Getenv(envAuthFile) + ")"
		return readCredential(os.Getenv(envAuthFile), "$"+envAuthFile)
	}
	return "", nil
}

// readCredential reads a file's first line. An error says which flag and
// why, never what the file holds.
func readCredential(path, from string) (string, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", fmt.Errorf("%s: %w", from, err)
	}
	line, _, _ := strings.Cut(string(b), "\n")
	return strings.TrimSuffix(line, "\r"), nil
}

// tlsConfig returns the TLS configuration of the flags (or their
// variables), nil when none is given.
func (f *secFlags) tlsConfig() (*tls.Config, error) {
	ca, cert, key := orEnv(f.tlsCA, envTLSCA), orEnv(f.tlsCert, envTLSCert), orEnv(f.tlsKey, envTLSKey)
	if ca == "" && cert == "" && key == "" {
		return nil, nil
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if (cert == "") != (key == "") {
		return nil, errors.New("--tls-cert and --tls-key go together")
	}
	if cert != "" {
		pair, err := tls.LoadX509KeyPair(cert, key)
		if err != nil {
			return nil, fmt.Errorf("--tls-cert, --tls-key: %w", err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	if ca != "" {
		pem, err := os.ReadFile(ca)
		if err != nil {
			return nil, fmt.Errorf("--tls-ca: %w", err)
		}
		cfg.RootCAs = x509.NewCertPool()
		if !cfg.RootCAs.AppendCertsFromPEM(pem) {
			return nil, fmt.Errorf("--tls-ca %s: no PEM certificate in it", ca)
		}
	}
	return cfg, nil
}

func orEnv(v, env string) string {
	if v != "" {
		return v
	}
	return os.Getenv(env)
}
