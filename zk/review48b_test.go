package zk_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// Issue 48, second review (r48b): attacks on package zk as a careless
// caller meets it (see review48b_test.go at the root).

// noPanic runs f, turning a panic into an error naming it.
func noPanic(f func() error) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("PANIC: %v", r)
		}
	}()
	return f()
}

// TestReview48b_OversizedRequests: a request over the session's maximum
// request size is refused unsent with ErrRequestTooLarge (its doc: "the
// server would have dropped the connection, and every request in flight
// on it") by every request method, reads with a huge path included, and by
// a Multi of many small ops whose total is over it; the connection is not
// dropped: no state transition is published, the session id stays.
func TestReview48b_OversizedRequests(t *testing.T) {
	t.Parallel()
	s := exampleSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.Client()
	id := c.SessionID()
	sctx, scancel := context.WithCancel(ctx)
	events, err := c.Subscribe(sctx)
	if err != nil {
		t.Fatal(err)
	}
	huge := "/" + strings.Repeat("a", zk.MaxDataSize+(64<<10))
	for name, call := range calls(c, huge) {
		if err := noPanic(func() error { return call(ctx) }); !errors.Is(err, zk.ErrRequestTooLarge) {
			t.Errorf("%s of a %d-byte path: %v, want ErrRequestTooLarge", name, len(huge), err)
		}
	}
	// MaxDataSize is zklock's WithData bound; Client's is the request
	// size (1048575 by default), which 1 MiB of data passes.
	big := make([]byte, 1<<20)
	if _, err := c.Create(ctx, "/review48b-big", big, zk.ModePersistent); !errors.Is(err, zk.ErrRequestTooLarge) {
		t.Errorf("Create with %d bytes of data: %v, want ErrRequestTooLarge", len(big), err)
	}
	if _, err := c.Set(ctx, "/review48b-big", big, -1); !errors.Is(err, zk.ErrRequestTooLarge) {
		t.Errorf("Set with %d bytes of data: %v, want ErrRequestTooLarge", len(big), err)
	}
	var ops []zk.Op
	chunk := make([]byte, 64<<10)
	for i := 0; i < 20; i++ {
		ops = append(ops, &zk.CreateOp{Path: fmt.Sprintf("/review48b-many-%d", i), Data: chunk, Mode: zk.ModePersistent})
	}
	if _, err := c.Multi(ctx, ops...); !errors.Is(err, zk.ErrRequestTooLarge) {
		t.Errorf("Multi of 20 ops of 64 KiB: %v, want ErrRequestTooLarge", err)
	}
	if _, ok, err := c.Exists(ctx, "/review48b-many-0"); err != nil || ok {
		t.Errorf("after the refused Multi, its first node exists=%v (%v)", ok, err)
	}
	if got := c.SessionID(); got != id {
		t.Errorf("session id 0x%x became 0x%x", id, got)
	}
	scancel()
	for ev := range events {
		t.Errorf("a state transition after oversized requests: %+v", ev)
	}
}

// TestReview48b_BadModesAndPaths: Create and a CreateOp of a mode that is
// none of the Mode constants fail with ErrInvalidArgument (which is
// zklock's), sending nothing; paths ZooKeeper refuses fail with
// ErrBadArguments (the empty path from every request method; a trailing
// slash or a NUL from Create), none
// panicking; and
// SetACL of an empty ACL is ErrInvalidACL.
func TestReview48b_BadModesAndPaths(t *testing.T) {
	t.Parallel()
	s := exampleSession(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	c := s.Client()
	p := "/review48b-mode"
	if _, err := c.Create(ctx, p, nil, zk.CreateMode(99)); !errors.Is(err, zk.ErrInvalidArgument) || !errors.Is(err, zklock.ErrInvalidArgument) {
		t.Errorf("Create of mode 99: %v, want ErrInvalidArgument", err)
	}
	if _, err := c.Multi(ctx, &zk.CreateOp{Path: p, Mode: zk.CreateMode(-1)}); !errors.Is(err, zk.ErrInvalidArgument) {
		t.Errorf("CreateOp of mode -1: %v, want ErrInvalidArgument", err)
	}
	if _, ok, err := c.Exists(ctx, p); err != nil || ok {
		t.Errorf("%s exists=%v (%v) after the refused creates", p, ok, err)
	}
	for name, call := range calls(c, "") {
		if err := noPanic(func() error { return call(ctx) }); !errors.Is(err, zk.ErrBadArguments) {
			t.Errorf("%s(\"\"): %v, want ErrBadArguments", name, err)
		}
	}
	// Paths the server refuses, under a parent that exists (else it
	// answers NoNode first): never a panic; a create is ErrBadArguments.
	if _, err := c.Create(ctx, "/review48b", nil, zk.ModePersistent); err != nil && !errors.Is(err, zk.ErrNodeExists) {
		t.Fatal(err)
	}
	defer c.Delete(context.Background(), "/review48b", -1)
	for _, bad := range []string{"/review48b/", "/review48b//x", "/review48b/./x", "/review48b/../x", "/review48b/\x00"} {
		for name, call := range calls(c, bad) {
			err := noPanic(func() error { return call(ctx) })
			if err != nil && strings.HasPrefix(err.Error(), "PANIC") {
				t.Errorf("%s(%q): %v", name, bad, err)
			}
			// "//x", "./x", "../x": the server looks for the parent first
			// ("/review48b/", "/review48b/.", ...) and answers NoNode.
			if (name == "Create" || name == "MultiCreate") && !strings.Contains(bad, "x") && !errors.Is(err, zk.ErrBadArguments) {
				t.Errorf("%s(%q): %v, want ErrBadArguments", name, bad, err)
			}
		}
	}
	if _, err := c.Create(ctx, p, nil, zk.ModePersistent); err != nil {
		t.Fatal(err)
	}
	defer c.Delete(context.Background(), p, -1)
	if _, err := c.SetACL(ctx, p, nil, -1); !errors.Is(err, zk.ErrInvalidACL) {
		t.Errorf("SetACL of no ACL: %v, want ErrInvalidACL", err)
	}
}
