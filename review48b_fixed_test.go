package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// Issue 48's second review (r48b): attacks that broke a claim, fixed
// (they failed as written here before the fix; see the commit).

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

// TestReview48bBreak_ZeroSession shows: a nil *Session is refused with
// ErrInvalidArgument by every constructor and package function
// (TestReview48b_BadInputNoPanic), but a Session not made by NewSession
// (&zklock.Session{}, the zero value of an exported struct) makes the
// package functions panic with a nil pointer dereference, and the
// constructors refuse it with a misleading message ("a 61-byte node path
// makes a 85-byte create request, over the 0-byte limit").
func TestReview48bBreak_ZeroSession(t *testing.T) {
	ctx := context.Background()
	zero := &zklock.Session{}
	for name, f := range map[string]func() error{
		"Contenders": func() error { _, err := zklock.Contenders(ctx, zero, "/x"); return err },
		"Break":      func() error { _, err := zklock.Break(ctx, zero, "/x", true); return err },
		"Revoke":     func() error { _, err := zklock.Revoke(ctx, zero, "/x"); return err },
		"NewMutex": func() error {
			_, err := zklock.NewMutex(zero, "/x")
			if err != nil && !errors.Is(err, zklock.ErrInvalidArgument) {
				return err
			}
			if err != nil {
				return fmt.Errorf("%w (message: %v)", zklock.ErrInvalidArgument, err)
			}
			return nil
		},
		"Session.Close":  zero.Close,
		"Session.Client": func() error { _ = zero.Client(); return zklock.ErrInvalidArgument },
	} {
		if err := callNoPanic(f); !errors.Is(err, zklock.ErrInvalidArgument) {
			t.Errorf("%s with a zero Session: %v, want ErrInvalidArgument", name, err)
		}
	}
}

// TestReview48bBreak_ZeroSessionWatchLock shows: WatchLock with a zero
// Session returns a channel, and a goroutine it started panics (a nil
// *session.Conn in internal/queue's watcher), which no caller can recover:
// the whole process dies. Run in a child process so the others survive.
func TestReview48bBreak_ZeroSessionWatchLock(t *testing.T) {
	if os.Getenv("R48B_WATCHLOCK_CHILD") == "1" {
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		ch, err := zklock.WatchLock(ctx, &zklock.Session{}, "/x")
		if err != nil {
			return // refused: what the claim asks
		}
		for range ch {
		}
		return
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReview48bBreak_ZeroSessionWatchLock$", "-test.count=1")
	cmd.Env = append(os.Environ(), "R48B_WATCHLOCK_CHILD=1")
	out, err := cmd.CombinedOutput()
	if err != nil {
		first := string(out)
		if i := strings.Index(first, "goroutine"); i > 0 {
			first = first[:i]
		}
		t.Fatalf("WatchLock(ctx, &zklock.Session{}, path) killed the process: %v\n%s", err, first)
	}
}
