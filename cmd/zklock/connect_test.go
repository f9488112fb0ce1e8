package main

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// causeWithin is how soon after zklock starts (its first attempt fails at
// once) the cause of the failure must be on stderr (issue 37, item 3).
const causeWithin = 2 * time.Second

// refusedAddr returns a loopback address nothing listens on.
func refusedAddr(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	return addr
}

// awaitCause starts zklock with args (connecting for up to 20s) and waits
// for want on stderr: it must come within causeWithin while zklock still
// retries. Then it interrupts zklock and returns its stderr.
func awaitCause(t *testing.T, env []string, want *regexp.Regexp, args ...string) string {
	t.Helper()
	args = append([]string{args[0], "--connect-timeout", "20s"}, args[1:]...)
	p := startEnv(t, env, args...)
	eventually(t, causeWithin, "stderr matching "+want.String(), func() bool { return want.MatchString(p.errOut.String()) })
	select {
	case <-p.done:
		t.Fatalf("zklock %v ended instead of retrying; stderr: %q", args, p.errOut.String())
	default:
	}
	p.signal(t, syscall.SIGTERM)
	p.wait(t, procTimeout)
	return p.errOut.String()
}

// A connection failure names its cause on stderr within 2s, while zklock
// keeps retrying until --connect-timeout; the final failure names it too.
func TestConnectNamesCause(t *testing.T) {
	t.Parallel()
	refused := refusedAddr(t)
	for _, tc := range []struct{ servers, cause string }{
		{refused, "connection refused"},
		{"zk.invalid:2181", "no such host zk.invalid"},
	} {
		want := regexp.MustCompile(`(?m)^zklock status: cannot connect to ` + regexp.QuoteMeta(tc.servers) + `: ` +
			tc.cause + `; retrying until --connect-timeout 20s$`)
		errOut := awaitCause(t, envWith(tc.servers), want, "status", "/p")
		t.Logf("--servers %s: stderr %q", tc.servers, errOut)

		code, _, errOut := runZklock(t, tc.servers, "status", "--connect-timeout", "1500ms", "/p")
		final := "cannot connect to " + tc.servers + " within 1.5s: " + tc.cause
		if code != exitError || !strings.Contains(errOut, final) {
			t.Errorf("--servers %s --connect-timeout 1.5s: exit %d, stderr %q; want %d and %q", tc.servers, code, errOut, exitError, final)
		}
	}
}

// badRequestServer listens on loopback and answers every connection as
// ZooKeeper's AdminServer (Jetty) answers bytes that are no HTTP request:
// a 400 at once, then it closes. It returns its address.
func badRequestServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_, _ = c.Write([]byte("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"))
			c.Close()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
	})
	return ln.Addr().String()
}

// Issue 47: an endpoint that is not a ZooKeeper client port (an HTTP
// server, such as ZooKeeper's AdminServer) was "frame length 1213486160",
// the bytes "HTTP" read as a length; it is named for what it is, at once
// (the library gives up on it, ErrNotZooKeeper), not after
// --connect-timeout.
func TestConnectNamesANonZooKeeperEndpoint(t *testing.T) {
	t.Parallel()
	addr := badRequestServer(t)
	began := time.Now()
	code, _, errOut := runZklock(t, addr, "status", "--connect-timeout", "20s", "/p")
	took := time.Since(began)
	final := regexp.MustCompile(`(?m)^zklock status: cannot connect to ` + regexp.QuoteMeta(addr) +
		`: not a ZooKeeper client port: it answered "HTTP…" \(check --servers: give the servers' client port`)
	t.Logf("exit %d after %v: %q", code, took.Round(time.Millisecond), errOut)
	if code != exitError || !final.MatchString(errOut) || strings.Contains(errOut, "frame length") ||
		strings.Contains(errOut, "zklock: ") {
		t.Errorf("exit %d, stderr %q; want %d and %s", code, errOut, exitError, final)
	}
	if took > 5*time.Second {
		t.Errorf("zklock status took %v to name an HTTP server, of --connect-timeout 20s", took)
	}
}

// TLS: --tls-ca, --tls-cert and --tls-key (or $ZK_TLS_CA, $ZK_TLS_CERT,
// $ZK_TLS_KEY) reach a TLS port that requires a client certificate; a
// server certificate nobody trusts is named as a TLS handshake failure
// within 2s.
func TestConnectTLS(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t, zktest.WithSelfSignedTLS())
	ca, cert, key := c.TLSFiles()
	secure, path := strings.Join(c.SecureServers(), ","), lockPath(t, "lock")

	code, out, errOut := runZklock(t, secure, "run", "--tls-ca", ca, "--tls-cert", cert, "--tls-key", key,
		path, "--", "sh", "-c", "echo ran $ZKLOCK_TOKEN")
	if code != 0 || !strings.HasPrefix(out, "ran ") {
		t.Fatalf("run over TLS with the flags: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	env := append(envWith(secure), envTLSCA+"="+ca, envTLSCert+"="+cert, envTLSKey+"="+key)
	p := startEnv(t, env, "status", "--json", path)
	if code := p.wait(t, procTimeout); code != 0 || !strings.Contains(p.out.String(), `"holders"`) {
		t.Fatalf("status over TLS from the environment: exit %d, stdout %q, stderr %q", code, p.out.String(), p.errOut.String())
	}

	// Without --tls-ca the system's authorities do not know the cluster's.
	want := regexp.MustCompile(`(?m)^zklock status: cannot connect to ` + regexp.QuoteMeta(c.SecureServers()[0]) +
		`: TLS handshake failed: .*certificate signed by unknown authority; retrying`)
	awaitCause(t, envWith(secure), want, "status", "--tls-cert", cert, "--tls-key", key, path)

	// A plain client on the TLS port, and TLS on the plain port, fail too.
	code, _, errOut = runZklock(t, secure, "status", "--connect-timeout", "2s", path)
	if code != exitError {
		t.Errorf("plain client on the TLS port: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runZklock(t, c.ConnectString(), "status", "--connect-timeout", "2s", "--tls-ca", ca, path)
	if code != exitError || !strings.Contains(errOut, "TLS handshake failed") {
		t.Errorf("TLS client on the plain port: exit %d, stderr %q; want %d and a TLS handshake failure", code, errOut, exitError)
	}
}

// Digest auth: from --auth, --auth-file or $ZK_AUTH. The nodes a holder
// creates are its user's alone: another password is refused at once, and
// named. The password appears in no output, nor on the supervisor's
// command line.
func TestConnectAuth(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	const user, password = "alice", "s3cret-Pw"
	dir := t.TempDir()
	authFile, cmdline, held := filepath.Join(dir, "auth"), filepath.Join(dir, "cmdline"), filepath.Join(dir, "held")
	if err := os.WriteFile(authFile, []byte(user+":"+password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	holder := start(t, servers, "run", "--auth", user+":"+password, path, "--", "sh", "-c",
		`tr '\0' ' ' < /proc/$PPID/cmdline > `+cmdline+`; touch `+held+`; sleep 60`)
	eventually(t, 30*time.Second, "the holder's command runs", func() bool { _, err := os.Stat(held); return err == nil })
	if b, err := os.ReadFile(cmdline); err != nil || strings.Contains(string(b), password) || !strings.Contains(string(b), supervisorArg) {
		t.Errorf("the supervisor's command line %q (%v): want %s without the password", b, err, supervisorArg)
	}

	outputs := []string{holder.errOut.String()}
	for _, env := range [][]string{
		append(envWith(servers), envAuth+"="+user+":"+password),
		append(envWith(servers), envAuthFile+"="+authFile),
	} {
		p := startEnv(t, env, "status", "--json", path)
		if code := p.wait(t, procTimeout); code != 0 || !strings.Contains(p.out.String(), `"holders"`) {
			t.Errorf("status with %s: exit %d, stderr %q", env[len(env)-1], code, p.errOut.String())
		}
		outputs = append(outputs, p.out.String(), p.errOut.String())
	}
	code, out, errOut := runZklock(t, servers, "status", "--auth-file", authFile, path)
	if code != 0 {
		t.Errorf("status --auth-file: exit %d, stderr %q", code, errOut)
	}
	outputs = append(outputs, out, errOut)

	// The wrong password: the servers refuse at once, and zklock says so.
	began := time.Now()
	p := startEnv(t, append(envWith(servers), envAuth+"="+user+":wrong-"+password), "status", path)
	code = p.wait(t, procTimeout)
	took, errOut := time.Since(began), p.errOut.String()
	if code != exitError || !strings.Contains(errOut, "not authorized") || !strings.Contains(errOut, "$ZK_AUTH") || took > causeWithin {
		t.Errorf("status with the wrong password: exit %d after %v, stderr %q; want %d within %v, naming the refusal",
			code, took.Round(time.Millisecond), errOut, exitError, causeWithin)
	}
	t.Logf("wrong password: exit %d after %v: %s", code, took.Round(time.Millisecond), strings.TrimSpace(errOut))
	outputs = append(outputs, errOut)

	// A malformed credential is a usage error that does not echo it.
	code, _, errOut = runZklock(t, servers, "status", "--auth", password, path)
	if code != exitUsage || !strings.Contains(errOut, "--auth: want USER:PASSWORD") {
		t.Errorf("--auth without a colon: exit %d, stderr %q", code, errOut)
	}
	outputs = append(outputs, errOut)
	for _, o := range outputs {
		if strings.Contains(o, password) {
			t.Errorf("output shows the password: %q", o)
		}
	}
	holder.signal(t, syscall.SIGTERM)
	holder.wait(t, procTimeout)
}

// --version prints the module version the go command stamped in the binary.
func TestVersion(t *testing.T) {
	code, out, errOut := runZklock(t, "", "--version")
	if code != 0 {
		t.Fatalf("--version: exit %d, stderr %q", code, errOut)
	}
	m, err := exec.Command("go", "version", "-m", binary).Output()
	if err != nil {
		t.Fatal(err)
	}
	mod := regexp.MustCompile(`(?m)^\tmod\tgithub.com/zklock/zklock\t(\S+)`).FindSubmatch(m)
	if mod == nil {
		t.Fatalf("go version -m: no mod line in %s", m)
	}
	if !regexp.MustCompile(`^zklock ` + regexp.QuoteMeta(string(mod[1])) + ` (\(commit [0-9a-f]{40}(, modified)?\) )?go\S+ \w+/\w+\n$`).MatchString(out) {
		t.Errorf("--version printed %q; want zklock %s, the commit, the toolchain and the platform", out, mod[1])
	}
}
