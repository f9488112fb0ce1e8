//go:build review

package zklock_test

import (
	"context"
	"errors"
	"testing"

	"github.com/zklock/zklock"
)

// Issue 48, second review (r48b): attacks that BROKE a claim. Behind the
// build tag "review" so that make test stays green; run with
// go test -tags review -run TestReview48bBreak_ .

// TestReview48bBreak_DowngradeNilCtx shows: errors.go promises
// ErrInvalidArgument from "every blocking method for a nil context", and
// every other method of every handle keeps that promise whether or not it
// holds (TestReview48b_BadInputNoPanic); RWMutex.Downgrade of a handle
// that holds nothing returns ErrNotLocked for a nil context instead: the
// misuse check comes before the argument check, so the same call is "fix
// the call" or "misuse" depending on state.
func TestReview48bBreak_DowngradeNilCtx(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	s := newSession(t, srv.Servers())
	rw, err := zklock.NewRWMutex(s, lockPath(t, "rw"))
	if err != nil {
		t.Fatal(err)
	}
	var nilCtx context.Context
	if err := rw.Downgrade(nilCtx); !errors.Is(err, zklock.ErrInvalidArgument) {
		t.Fatalf("RWMutex.Downgrade(nil ctx) holding nothing: %v, want ErrInvalidArgument", err)
	}
}
