package main

import (
	"strings"
	"testing"

	"github.com/zklock/zklock/zktest"
)

// Servers that refuse 'conf' (a stock whitelist): zklock refuses to
// connect, naming both fixes, until --ensemble-timing states the timing;
// then it connects and says what the loss signal rests on.
func TestEnsembleTimingFlag(t *testing.T) {
	c := zktest.StartEnsemble(t, 3, zktest.WithFourLetterWords("srvr"))
	path := lockPath(t, "p")
	code, _, errOut := runZklock(t, c.ConnectString(), "status", "--connect-timeout", "10s", path)
	if code == 0 {
		t.Fatalf("status connected on a timing it could not learn; stderr %q", errOut)
	}
	for _, want := range []string{"4lw.commands.whitelist=srvr,conf", "--ensemble-timing"} {
		if !strings.Contains(errOut, want) {
			t.Fatalf("stderr %q lacks %q", errOut, want)
		}
	}
	code, _, errOut = runZklock(t, c.ConnectString(), "status", "--connect-timeout", "10s", "--ensemble-timing", "100ms,15", path)
	if code != 0 || !strings.Contains(errOut, "rests on --ensemble-timing 100ms,15") {
		t.Fatalf("with --ensemble-timing: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runZklock(t, c.ConnectString(), "status", "--ensemble-timing", "100ms", path)
	if code == 0 || !strings.Contains(errOut, "want TICK,SYNCLIMIT") {
		t.Fatalf("a malformed --ensemble-timing: exit %d, stderr %q", code, errOut)
	}
}
