package zk_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Issue 48's review of package zk: every Client method, as a user calls
// it, with the errors its doc and docs/api.md promise.

// exampleSession opens a session on the examples' server (ZK_SERVERS, see
// TestMain), closed at cleanup.
func exampleSession(t *testing.T) *zklock.Session {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// calls are every request method of Client, on path p.
func calls(c *zk.Client, p string) map[string]func(ctx context.Context) error {
	return map[string]func(ctx context.Context) error{
		"Create": func(ctx context.Context) error {
			_, err := c.Create(ctx, p, nil, zk.ModePersistent)
			return err
		},
		"Get":      func(ctx context.Context) error { _, _, err := c.Get(ctx, p); return err },
		"GetW":     func(ctx context.Context) error { _, _, w, err := c.GetW(ctx, p); stopWatch(w); return err },
		"Set":      func(ctx context.Context) error { _, err := c.Set(ctx, p, nil, -1); return err },
		"Delete":   func(ctx context.Context) error { return c.Delete(ctx, p, -1) },
		"Exists":   func(ctx context.Context) error { _, _, err := c.Exists(ctx, p); return err },
		"ExistsW":  func(ctx context.Context) error { _, _, w, err := c.ExistsW(ctx, p); stopWatch(w); return err },
		"Children": func(ctx context.Context) error { _, _, err := c.Children(ctx, p); return err },
		"ChildrenW": func(ctx context.Context) error {
			_, _, w, err := c.ChildrenW(ctx, p)
			stopWatch(w)
			return err
		},
		"GetACL": func(ctx context.Context) error { _, _, err := c.GetACL(ctx, p); return err },
		"SetACL": func(ctx context.Context) error {
			_, err := c.SetACL(ctx, p, zk.WorldACL(zk.PermAll), -1)
			return err
		},
		"MultiCheck": func(ctx context.Context) error { _, err := c.Multi(ctx, &zk.CheckOp{Path: p, Version: -1}); return err },
		"MultiCreate": func(ctx context.Context) error {
			_, err := c.Multi(ctx, &zk.CreateOp{Path: p, Mode: zk.ModePersistent})
			return err
		},
		"MultiSet": func(ctx context.Context) error {
			_, err := c.Multi(ctx, &zk.SetDataOp{Path: p, Version: -1})
			return err
		},
		"MultiDelete": func(ctx context.Context) error {
			_, err := c.Multi(ctx, &zk.DeleteOp{Path: p, Version: -1})
			return err
		},
	}
}

// stopWatch removes a watch a call set, if any.
func stopWatch(w *zk.Watch) {
	if w != nil {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_ = w.Remove(ctx) // a leftover watch is the test's, not the attack's
	}
}

// TestReviewBreak_ClientBadCalls: every request method of Client refuses
// a nil ctx with zk.ErrNilContext, which is also zk's and zklock's
// ErrInvalidArgument (errors.go: "It is zklock.ErrInvalidArgument"), and
// a path that is not absolute with zk.ErrBadArguments, sending nothing:
// the node is not created.
func TestReviewBreak_ClientBadCalls(t *testing.T) {
	t.Parallel()
	s := exampleSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.Client()
	var nilCtx context.Context
	for name, call := range calls(c, "/review48-nilctx") {
		err := call(nilCtx)
		if !errors.Is(err, zk.ErrNilContext) || !errors.Is(err, zk.ErrInvalidArgument) || !errors.Is(err, zklock.ErrInvalidArgument) {
			t.Errorf("%s with a nil ctx: %v, want zk.ErrNilContext (zk.ErrInvalidArgument, zklock.ErrInvalidArgument)", name, err)
		}
	}
	if _, ok, err := c.Exists(ctx, "/review48-nilctx"); err != nil || ok {
		t.Errorf("after the nil-ctx calls, /review48-nilctx exists %v (%v): one was sent", ok, err)
	}
	if _, err := c.Subscribe(nilCtx); !errors.Is(err, zk.ErrNilContext) {
		t.Errorf("Subscribe with a nil ctx: %v, want zk.ErrNilContext", err)
	}
	for name, call := range calls(c, "review48-relative") {
		if err := call(ctx); !errors.Is(err, zk.ErrBadArguments) {
			t.Errorf("%s of a relative path: %v, want zk.ErrBadArguments", name, err)
		}
	}
}

// TestReviewBreak_ClientClosed: after the Session is closed, every request
// method fails with zk.ErrSessionClosed, the very value of
// zklock.ErrSessionClosed.
func TestReviewBreak_ClientClosed(t *testing.T) {
	t.Parallel()
	if zk.ErrSessionClosed != zklock.ErrSessionClosed || zk.ErrInvalidArgument != zklock.ErrInvalidArgument {
		t.Fatal("zk's ErrSessionClosed or ErrInvalidArgument is not the root's value")
	}
	s := exampleSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.Client()
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	for name, call := range calls(c, "/review48-closed") {
		if err := call(ctx); !errors.Is(err, zklock.ErrSessionClosed) {
			t.Errorf("%s after Close: %v, want ErrSessionClosed", name, err)
		}
	}
	if st := c.State(); st != zk.StateClosed {
		t.Errorf("State after Close: %v", st)
	}
}
