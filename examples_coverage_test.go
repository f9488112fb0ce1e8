package zklock_test

import (
	"testing"

	"github.com/zklock/zklock/internal/examplecheck"
)

// Every exported type has a testable example that runs (with an Output
// comment), and so do the main flows a newcomer looks for.
func TestEveryTypeHasAnExample(t *testing.T) {
	missing, err := examplecheck.Missing(".",
		"NewSession", "Session.Subscribe", "Mutex.Lock", "Mutex.TryLock", "Mutex.Locker", "RWMutex.RLock",
		"RWMutex.RLocker", "Election.Campaign", "Election.Observe", "Election.Run", "Revoke", "Break",
		"WithMaxHold", "WithCohort", "WithMetrics", "NewMultiLock")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range missing {
		t.Errorf("no example: %s", m)
	}
}
