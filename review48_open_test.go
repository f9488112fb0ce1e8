//go:build review

package zklock_test

import (
	"testing"

	"github.com/zklock/zklock"
)

// Issue 48's review: the attacks that broke a claim (see review48_test.go).

// TestReviewBreak_TermGuardAfterResign: the CHANGELOG (Unreleased, "Node()
// of Mutex, RWMutex, ReentrantMutex, Lease and Term → Guard().Path (Guard
// is nil when nothing is held)") says a Term's Guard is nil once nothing is
// held; after Resign it is still the old check.
func TestReviewBreak_TermGuardAfterResign(t *testing.T) {
	t.Parallel()
	srv := shared(t)
	ctx := ctxFor(t)
	s := newSession(t, srv.Servers())
	e, err := zklock.NewElection(s, lockPath(t, "e"))
	if err != nil {
		t.Fatal(err)
	}
	term, err := e.Campaign(ctx, []byte("me"))
	if err != nil {
		t.Fatal(err)
	}
	if term.Guard() == nil {
		t.Fatal("Term.Guard is nil while leading")
	}
	if err := e.Resign(ctx); err != nil {
		t.Fatal(err)
	}
	if g := term.Guard(); g != nil {
		t.Fatalf("Term.Guard after Resign: %+v, the CHANGELOG says nil when nothing is held", *g)
	}
}
