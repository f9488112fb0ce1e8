package main

import (
	"net"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// Issue 35, item 5: a waiter whose stderr is not a terminal reports each
// change of state on a line of its own: waiting behind the holder, the
// connection lost and back, acquired.
func TestWaiterReportsEachChangeOfState(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	holder := holdLock(t, servers, path, "--data", "the-holder")
	p := zktest.NewProxy(t, c.Servers())
	waiter := start(t, "", "run", "--servers", strings.Join(p.Addrs(), ","), "--session-timeout", "2s", path, "--", "true")
	stderrHas := func(what string, re *regexp.Regexp) {
		t.Helper()
		eventually(t, 30*time.Second, what, func() bool { return re.MatchString(waiter.errOut.String()) })
	}
	stderrHas("a line saying the waiter waits behind the-holder",
		regexp.MustCompile(`(?m)^zklock run: waiting for `+regexp.QuoteMeta(path)+`: held by the-holder`))
	p.Blackhole()
	stderrHas("a line saying the connection was lost", regexp.MustCompile(`(?m)^zklock run: .*reconnecting`))
	p.Heal()
	stderrHas("a line saying it is back", regexp.MustCompile(`(?m)^zklock run: (reconnected|session .* expired)`))
	holder.signal(t, syscall.SIGTERM)
	if code := waiter.wait(t, procTimeout); code != 0 {
		t.Fatalf("waiter: exit %d; stderr: %s", code, waiter.errOut.String())
	}
	stderrHas("a line saying it acquired", regexp.MustCompile(`(?m)^zklock run: acquired `+regexp.QuoteMeta(path)))
	for _, l := range strings.Split(strings.TrimSpace(waiter.errOut.String()), "\n") {
		if !strings.HasPrefix(l, "zklock run: ") {
			t.Errorf("stderr line %q is not one of zklock's reports", l)
		}
	}
	holder.wait(t, procTimeout)
}

// --quiet silences those reports: waiting behind a holder, and connecting
// to a server that does not answer (reported after a second without it),
// where only the failure is.
func TestWaiterQuiet(t *testing.T) {
	t.Parallel()
	silent := silentServer(t)
	for _, quiet := range []bool{false, true} {
		args := []string{"run", "--servers", silent, "--connect-timeout", "2s", "/p", "--", "true"}
		if quiet {
			args = append([]string{"run", "--quiet"}, args[1:]...)
		}
		code, _, errOut := runZklock(t, "", args...)
		lines := strings.Split(strings.TrimSpace(errOut), "\n")
		switch {
		case code != exitError:
			t.Errorf("quiet %v against a silent server: exit %d, want %d; stderr: %q", quiet, code, exitError, errOut)
		case quiet && len(lines) != 1:
			t.Errorf("quiet against a silent server: stderr %q, want the failure alone", errOut)
		case !quiet && !strings.Contains(errOut, "connecting to "+silent):
			t.Errorf("against a silent server: stderr %q, want a line saying it is connecting", errOut)
		}
	}

	c := shared(t)
	servers, path := c.ConnectString(), lockPath(t, "lock")
	holder := holdLock(t, servers, path, "--data", "the-holder")
	waiter := start(t, servers, "run", "--quiet", path, "--", "true")
	awaitQueue(t, servers, path, 1, 1)
	holder.signal(t, syscall.SIGTERM)
	if code := waiter.wait(t, procTimeout); code != 0 || waiter.errOut.String() != "" {
		t.Errorf("quiet waiter: exit %d, stderr %q; want 0 and nothing", code, waiter.errOut.String())
	}
	holder.wait(t, procTimeout)
}

// silentServer accepts connections on 127.0.0.1 and never answers, like a
// server that is paused or stuck.
func silentServer(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	var conns []net.Conn
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			mu.Lock()
			conns = append(conns, c)
			mu.Unlock()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		<-done
		mu.Lock()
		defer mu.Unlock()
		for _, c := range conns {
			c.Close()
		}
	})
	return ln.Addr().String()
}

// Issue 35, item 5: --connect-timeout is honoured against a server that
// accepts and never answers. The bound allows for starting the process.
func TestConnectTimeoutAgainstASilentServer(t *testing.T) {
	addr := silentServer(t)
	const timeout, slack = 2 * time.Second, 500 * time.Millisecond
	for _, args := range [][]string{
		{"status", "/p"},
		{"run", "/p", "--", "true"},
	} {
		began := time.Now()
		code, _, errOut := runZklock(t, "", append([]string{args[0], "--servers", addr, "--connect-timeout", "2s"}, args[1:]...)...)
		took := time.Since(began)
		if code != exitError || !strings.Contains(errOut, "within 2s") {
			t.Errorf("%s: exit %d, want %d; stderr: %q", args[0], code, exitError, errOut)
		}
		if took > timeout+slack {
			t.Errorf("%s --connect-timeout %v gave up after %v", args[0], timeout, took.Round(time.Millisecond))
		}
		t.Logf("%s --connect-timeout %v against a silent server: gave up after %v", args[0], timeout, took.Round(time.Millisecond))
	}
}
