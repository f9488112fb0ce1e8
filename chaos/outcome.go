package chaos

import (
	"encoding/json"
	"fmt"
	"os"
)

// OutcomeFile is the file, in the run's log directory, where Run saves the
// Outcome it checked: go run ./recheck (in chaos/) checks it again, for example
// after the checker changed.
const OutcomeFile = "outcome.json"

// SaveOutcome writes r to path as JSON.
func SaveOutcome(path string, r *Outcome) error {
	b, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("chaos: encode outcome: %w", err)
	}
	return os.WriteFile(path, b, 0o644)
}

// LoadOutcome reads an Outcome written by SaveOutcome.
func LoadOutcome(path string) (*Outcome, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Outcome
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("chaos: %s: %w", path, err)
	}
	if r.Stop <= r.Start || r.SessionTimeout <= 0 {
		return nil, fmt.Errorf("chaos: %s: not a chaos outcome (no run span or session timeout)", path)
	}
	return &r, nil
}
