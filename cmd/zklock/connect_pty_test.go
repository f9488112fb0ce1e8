//go:build linux

package main

import (
	"regexp"
	"strings"
	"testing"
	"time"
)

// On a terminal, connecting shows a progress line, rewritten each second
// below the causes of the failed attempts, and erased at the end.
func TestConnectProgressOnTerminal(t *testing.T) {
	refused := refusedAddr(t)
	cmd, _, out := startOnTerminal(t, refused, "status", "--connect-timeout", "3s", "/p")
	if err := cmd.Wait(); err == nil {
		t.Fatal("status against a refused port: exit 0")
	}
	progress := regexp.MustCompile(`\rzklock status: connecting to ` + regexp.QuoteMeta(refused) + `: [0-9]+s \(giving up after 3s\)\x1b\[K`)
	cause := "zklock status: cannot connect to " + refused + ": connection refused; retrying until --connect-timeout 3s"
	eventually(t, 5*time.Second, "the progress line, the cause and the failure on the terminal", func() bool {
		s := out.String()
		return progress.MatchString(s) && strings.Contains(s, cause) && strings.Contains(s, "within 3s: connection refused")
	})
	if s := out.String(); strings.Contains(s, "\nzklock status: connecting to") {
		t.Errorf("on a terminal the progress line replaces the 'connecting to' line: %q", s)
	}
}
