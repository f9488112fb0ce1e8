package zklock_test

import (
	"testing"

	"github.com/zklock/zklock/internal/examplecheck"
)

// Every exported type has a testable example that runs (with an Output
// comment), and so do the main flows a newcomer looks for.
func TestEveryTypeHasAnExample(t *testing.T) {
	t.Parallel()
	missing, err := examplecheck.Missing(".",
		"NewSession", "Mutex.Lock", "Mutex.TryLock", "RWMutex.RLock",
		"Contenders", "Election.Campaign", "Election.Observe", "Election.Run", "Revoke", "Break", "WatchLock",
		"WithMaxHold", "WithCohort", "WithMetrics", "NewMultiLock")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("no example: %s", m)
	}
	// And each type has one of its own (Example<Type> or of a method), not
	// only its constructor's: a reader finds it by the type's name.
	unnamed, err := examplecheck.WithoutOwnExample(".")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range unnamed {
		t.Errorf("no example of its own: %s", m)
	}
}

// Every example can be copied as it is: it uses no type, function,
// variable or constant of the test files declared outside it (a helper a
// reader would not have; a whole-file example may use its own file's); it
// takes its servers from ZK_SERVERS, as the README program does.
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
