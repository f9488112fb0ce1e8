//go:build review

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
	"github.com/zklock/zklock/zk"
)

// guardWrites and dataNode are review48_test.go's.

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

// TestReview48bBreak_ZeroHandles shows (misuse, not bad input: handles
// are made by their constructors, which their docs name): the zero value
// of every exported handle type, and a nil one, panics on its first
// blocking call instead of returning an error of the misuse group.
func TestReview48bBreak_ZeroHandles(t *testing.T) {
	ctx := context.Background()
	for name, f := range map[string]func() error{
		"zero Mutex.Lock":        func() error { var m zklock.Mutex; return m.Lock(ctx) },
		"nil Mutex.Lock":         func() error { var m *zklock.Mutex; return m.Lock(ctx) },
		"zero Election.Campaign": func() error { var e zklock.Election; _, err := e.Campaign(ctx, nil); return err },
		"zero MultiLock.Lock":    func() error { var m zklock.MultiLock; return m.Lock(ctx) },
		"zero Lease.Release":     func() error { var l zklock.Lease; return l.Release(ctx) },
		"zero zk.Client.Get":     func() error { var c zk.Client; _, _, err := c.Get(ctx, "/"); return err },
		"zero zk.Watch.Remove":   func() error { var w zk.Watch; return w.Remove(ctx) },
	} {
		if err := callNoPanic(f); err == nil || err.Error()[:5] == "PANIC" {
			t.Errorf("%s: %v", name, err)
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
