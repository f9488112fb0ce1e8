package main

import (
	"bytes"
	"context"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// zklock revoke of an election's leader writes the request (the node
// carries no zklock mark and cannot be told from Curator's), and says so:
// nobody listens, and the leader's value now reads __REVOKE__. Its help
// says so too, rather than promising a refusal (issue 47).
func TestRevokeElectionLeaderSaysWritten(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := lockPath(t, "elect")
	e, err := zklock.NewElection(newSession(t, servers), path)
	if err != nil {
		t.Fatal(err)
	}
	term, err := e.Campaign(ctx, []byte("web1"))
	if err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runZklock(t, servers, "revoke", path)
	node := nodeOf(term.Guard())
	if code != exitOK || !strings.Contains(out, node) || !strings.Contains(out, "written") ||
		!strings.Contains(out, "__REVOKE__") {
		t.Fatalf("revoke of an election leader: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	var help bytes.Buffer
	run([]string{"help", "revoke"}, &help, &help)
	if !strings.Contains(help.String(), "election") || !strings.Contains(help.String(), "__REVOKE__") {
		t.Fatalf("help revoke does not say an election's leader is written:\n%s", help.String())
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// A leader whose node was written with a revocation request is shown as
// status shows it, "revocation requested", by ls, elect --observe and a
// waiting candidate's "led by" line, not as the raw __REVOKE__ (issue 47).
func TestRevokedLeaderShownAsRequested(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := lockPath(t, "elect")
	s := newSession(t, servers)
	e, err := zklock.NewElection(s, path)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Campaign(ctx, []byte("web1")); err != nil {
		t.Fatal(err)
	}
	if _, err := zklock.Revoke(ctx, s, path); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runZklock(t, servers, "ls", path)
	if code != exitOK || !strings.Contains(out, "revocation requested") || strings.Contains(out, "__REVOKE__") {
		t.Errorf("ls: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	observer := start(t, servers, "elect", "--observe", path)
	eventually(t, 30*time.Second, "the observer to print the leader", func() bool {
		return strings.Contains(observer.out.String(), " leader ")
	})
	observer.signal(t, syscall.SIGINT)
	observer.wait(t, procTimeout)
	if out := observer.out.String(); !strings.Contains(out, "revocation requested") || strings.Contains(out, "__REVOKE__") {
		t.Errorf("elect --observe: stdout %q", out)
	}
	code, _, errOut = runZklock(t, servers, "elect", "--timeout", "2s", path, "web2", "--", "true")
	if !strings.Contains(errOut, "led by session 0x") || !strings.Contains(errOut, "(revocation requested)") || strings.Contains(errOut, "__REVOKE__") {
		t.Errorf("elect candidate: exit %d, stderr %q", code, errOut)
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
}

// zklock revoke and break of a semaphore's path, one of its two leases
// held, do not say "no holder" (ls lists it held): they say that a
// semaphore's leases are not revoked or broken, and exit 125 (issue 47).
func TestRevokeAndBreakOfSemaphoreSayWhy(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := lockPath(t, "gpu")
	sem, err := zklock.NewSemaphore(newSession(t, servers), path, 2)
	if err != nil {
		t.Fatal(err)
	}
	lease, err := sem.Acquire(ctx, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"revoke", "break"} {
		code, out, errOut := runZklock(t, servers, cmd, path)
		if code != exitError || strings.Contains(errOut, "no holder") || !strings.Contains(errOut, "semaphore") {
			t.Errorf("%s of a semaphore with a lease held: exit %d, stdout %q, stderr %q", cmd, code, out, errOut)
		}
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}
