package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// zklock revoke of an election's leader writes the request (the node
// carries no zklock mark and cannot be told from Curator's), and says so:
// nobody listens, and the leader's value now reads __REVOKE__. Its help
// says so too, rather than promising a refusal (issue 47).
func TestRevokeElectionLeaderSaysWritten(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
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
