package zklock

import (
	"errors"
	"testing"
	"time"
)

// Every pair of primitive and option that cannot be made safe is refused
// at construction with ErrInvalidArgument (issue 34; the table of pairs is
// in docs/recipes.md, "What happens when…"). Nothing is sent: the
// constructors only read their options.
func TestPairsRefusedAtConstruction(t *testing.T) {
	fs := fakeSession()
	const p = "/pairs/p"
	reserved := WithData([]byte("x" + reservedData + "a"))
	for _, tc := range []struct {
		name string
		make func() error
	}{
		{"Semaphore WithMaxHold", func() error { _, err := NewSemaphore(fs, p, 2, WithMaxHold(time.Second)); return err }},
		{"Semaphore WithRevocable", func() error { _, err := NewSemaphore(fs, p, 2, WithRevocable()); return err }},
		{"Semaphore WithCohort", func() error { _, err := NewSemaphore(fs, p, 2, WithCohort(0, 0)); return err }},
		{"Semaphore queue WithMaxHold", func() error {
			_, err := NewSemaphore(fs, p, 2, WithPermitLayout(), WithMaxHold(time.Second))
			return err
		}},
		{"Semaphore queue WithRevocable", func() error {
			_, err := NewSemaphore(fs, p, 2, WithPermitLayout(), WithRevocable())
			return err
		}},
		{"Semaphore queue WithCohort", func() error {
			_, err := NewSemaphore(fs, p, 2, WithPermitLayout(), WithCohort(0, 0))
			return err
		}},
		{"Election WithMaxHold", func() error { _, err := NewElection(fs, p, WithMaxHold(time.Second)); return err }},
		{"Election WithRevocable", func() error { _, err := NewElection(fs, p, WithRevocable()); return err }},
		{"Election WithCohort", func() error { _, err := NewElection(fs, p, WithCohort(0, 0)); return err }},
		{"RWMutex WithCohort", func() error { _, err := NewRWMutex(fs, p, WithCohort(0, 0)); return err }},
		{"Mutex WithCohort WithRevocable", func() error { _, err := NewMutex(fs, p, WithCohort(0, 0), WithRevocable()); return err }},
		{"Mutex WithCohort WithMaxHold", func() error {
			_, err := NewMutex(fs, p, WithCohort(0, 0), WithMaxHold(time.Second))
			return err
		}},
		{"ReentrantMutex WithCohort WithRevocable", func() error {
			_, err := NewReentrantMutex(fs, p, WithCohort(0, 0), WithRevocable())
			return err
		}},
		{"ReentrantMutex WithCohort WithMaxHold", func() error {
			_, err := NewReentrantMutex(fs, p, WithCohort(0, 0), WithMaxHold(time.Second))
			return err
		}},
		{"Mutex WithPermitLayout", func() error { _, err := NewMutex(fs, p, WithPermitLayout()); return err }},
		{"ReentrantMutex WithSequenceLayout", func() error { _, err := NewReentrantMutex(fs, p, WithSequenceLayout()); return err }},
		{"RWMutex WithSequenceLayout", func() error { _, err := NewRWMutex(fs, p, WithSequenceLayout()); return err }},
		{"Semaphore WithSequenceLayout", func() error { _, err := NewSemaphore(fs, p, 2, WithSequenceLayout()); return err }},
		{"Election WithSequenceLayout", func() error { _, err := NewElection(fs, p, WithSequenceLayout()); return err }},
		{"Mutex sequence layout WithCohort", func() error { _, err := NewMutex(fs, p, WithSequenceLayout(), WithCohort(0, 0)); return err }},
		{"Mutex sequence layout WithRevocable", func() error { _, err := NewMutex(fs, p, WithSequenceLayout(), WithRevocable()); return err }},
		{"Mutex sequence layout WithMaxHold", func() error {
			_, err := NewMutex(fs, p, WithSequenceLayout(), WithMaxHold(time.Second))
			return err
		}},
		{"Mutex sequence layout WithListingHandoff", func() error {
			_, err := NewMutex(fs, p, WithSequenceLayout(), WithListingHandoff())
			return err
		}},
		{"Mutex sequence layout reserved data", func() error { _, err := NewMutex(fs, p, WithSequenceLayout(), reserved); return err }},
		{"Mutex reserved data", func() error { _, err := NewMutex(fs, p, reserved); return err }},
		{"ReentrantMutex reserved data", func() error { _, err := NewReentrantMutex(fs, p, reserved); return err }},
		{"RWMutex reserved data", func() error { _, err := NewRWMutex(fs, p, reserved); return err }},
		{"Semaphore reserved data", func() error { _, err := NewSemaphore(fs, p, 2, reserved); return err }},
		{"Semaphore queue reserved data", func() error { _, err := NewSemaphore(fs, p, 2, WithPermitLayout(), reserved); return err }},
		{"Election reserved data", func() error { _, err := NewElection(fs, p, reserved); return err }},
	} {
		if err := tc.make(); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v, want ErrInvalidArgument", tc.name, err)
		}
	}
	e, err := NewElection(fs, p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Campaign(t.Context(), []byte("x"+reservedData)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Campaign with a reserved value: %v, want ErrInvalidArgument", err)
	}
	// Data that only looks like a tag without its NUL byte is the caller's.
	if _, err := NewMutex(fs, p, WithData([]byte("zklock:a"))); err != nil {
		t.Errorf("data without the reserved prefix: %v", err)
	}
}
