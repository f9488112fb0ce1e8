package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// zklock revoke tells a revocable holder, refuses one that is not, and
// reports a path nobody holds.
func TestRevokeCommand(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	servers := c.ConnectString()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := lockPath(t, "revoke")
	m, err := zklock.NewMutex(newSession(t, servers), path, zklock.WithRevocable())
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runZklock(t, servers, "revoke", path)
	if code != exitOK || !strings.Contains(out, "revocation requested: "+m.Node()) {
		t.Fatalf("revoke: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	select {
	case <-m.Revoked():
	case <-ctx.Done():
		t.Fatal("the holder was not told")
	}
	if code, out, errOut := runZklock(t, servers, "status", path); code != exitOK || !strings.Contains(out, "revocation requested") {
		t.Fatalf("status of a revoked holder: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := m.Unlock(ctx); err != nil {
		t.Fatal(err)
	}

	plain, err := zklock.NewMutex(newSession(t, servers), path+"-plain")
	if err != nil {
		t.Fatal(err)
	}
	if err := plain.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	code, _, errOut = runZklock(t, servers, "revoke", path+"-plain")
	if code != exitError || !strings.Contains(errOut, "not revocable") {
		t.Fatalf("revoke of a holder that is not revocable: exit %d, stderr %q", code, errOut)
	}
	code, _, errOut = runZklock(t, servers, "revoke", path+"-none")
	if code != exitError || !strings.Contains(errOut, "not locked") {
		t.Fatalf("revoke of nothing: exit %d, stderr %q", code, errOut)
	}
}

// zklock break shows the holder and refuses without --force; with it the
// holder's node goes and the waiter holds.
func TestBreakCommand(t *testing.T) {
	t.Parallel()
	c := zktest.Start(t)
	servers := c.ConnectString()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := lockPath(t, "break")
	m, err := zklock.NewMutex(newSession(t, servers), path, zklock.WithData([]byte("stuck@host")))
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	w, err := zklock.NewMutex(newSession(t, servers), path)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() { got <- w.Lock(ctx) }()
	code, out, errOut := runZklock(t, servers, "break", path)
	if code != exitError || !strings.Contains(out, "stuck@host") || !strings.Contains(out, m.Node()) ||
		!strings.Contains(errOut, "--force") {
		t.Fatalf("break without --force: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	select {
	case err := <-got:
		t.Fatalf("the waiter's Lock returned (%v) after a refused break", err)
	default:
	}
	code, out, errOut = runZklock(t, servers, "break", "--force", path)
	if code != exitOK || !strings.Contains(out, "broke: "+m.Node()) || !strings.Contains(errOut, "fencing") {
		t.Fatalf("break --force: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}
