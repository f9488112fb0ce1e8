package zk_test

import (
	"fmt"
	"os"
	"testing"

	"github.com/zklock/zklock/internal/examplecheck"
	"github.com/zklock/zklock/internal/exampleserver"
	"go.uber.org/goleak"
)

// TestMain points ZK_SERVERS at the examples' ZooKeeper (started on the
// first connection: see internal/exampleserver), runs the tests, stops it,
// and then, as goleak.VerifyTestMain does, fails a passing run that leaked
// goroutines.
func TestMain(m *testing.M) {
	if err := exampleserver.Start(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := m.Run()
	exampleserver.Stop()
	if code == 0 {
		if err := goleak.Find(); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: errors on successful test run: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// Every exported type has a testable example that runs (with an Output
// comment), and so do Multi, the way to write under a lock, and
// Subscribe, the way to follow the session's connection.
func TestEveryTypeHasAnExample(t *testing.T) {
	t.Parallel()
	missing, err := examplecheck.Missing(".", "Client.Multi", "Client.Subscribe")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("no example: %s", m)
	}
	unnamed, err := examplecheck.WithoutOwnExample(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range unnamed {
		t.Errorf("no example of its own: %s", m)
	}
}

// Every example can be copied as it is: it uses nothing of the test files
// declared outside it, and takes its servers from ZK_SERVERS.
func TestExamplesAreCopyable(t *testing.T) {
	t.Parallel()
	uses, err := examplecheck.NotStandalone(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range uses {
		t.Error(u)
	}
}
