package zktest_test

import (
	"testing"

	"github.com/zklock/zklock/internal/examplecheck"
)

// Every exported type of zktest has a testable example that runs, and so
// do the entry points a test author starts from.
func TestEveryTypeHasAnExample(t *testing.T) {
	missing, err := examplecheck.Missing(".", "Start", "StartEnsemble", "Launch", "Proxy.Blackhole", "ExpireSession")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("no example: %s", m)
	}
}
