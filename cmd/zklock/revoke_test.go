package main

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
	"github.com/zklock/zklock/zk"
)

// zklock revoke tells a revocable holder, refuses one that is not, and
// reports a path nobody holds.
func TestRevokeCommand(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := lockPath(t, "revoke")
	opt, revoked := revocable()
	m, err := zklock.NewMutex(newSession(t, servers), path, opt)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runZklock(t, servers, "revoke", path)
	if code != exitOK || !strings.Contains(out, "revocation requested: "+nodeOf(m.Guard())) {
		t.Fatalf("revoke: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	select {
	case <-revoked:
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
	c := shared(t)
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
	if code != exitError || !strings.Contains(out, "stuck@host") || !strings.Contains(out, nodeOf(m.Guard())) ||
		!strings.Contains(out, "(node created ") || strings.Contains(out, " since ") || !strings.Contains(errOut, "--force") {
		t.Fatalf("break without --force: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	select {
	case err := <-got:
		t.Fatalf("the waiter's Lock returned (%v) after a refused break", err)
	default:
	}
	code, out, errOut = runZklock(t, servers, "break", "--force", path)
	if code != exitOK || !strings.Contains(out, "broke: "+nodeOf(m.Guard())) || !strings.Contains(errOut, "fencing") {
		t.Fatalf("break --force: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	if err := <-got; err != nil {
		t.Fatal(err)
	}
	if err := w.Unlock(ctx); err != nil {
		t.Fatal(err)
	}
}

// Issue 47: 'zklock revoke' could never succeed against a 'zklock run'
// holder. With --revocable, run honours a revocation as it does a loss:
// SIGTERM to the command, SIGKILL after the grace period, exit 123 once no
// process of the command's is left, then the release lets the waiter in.
// Without it, revoke is refused and the holder runs on.
func TestRunRevocable(t *testing.T) {
	c := shared(t)
	servers := c.ConnectString()
	path := lockPath(t, "revocable")
	code, _, errOut := runZklock(t, servers, "run", "-n", "2", "--revocable", path+"-sem", "--", "true")
	if code != exitUsage || !strings.Contains(errOut, "--revocable") {
		t.Errorf("run -n 2 --revocable: exit %d, stderr %q; want %d naming --revocable", code, errOut, exitUsage)
	}

	plain := holdLock(t, servers, path+"-plain")
	if code, _, errOut := runZklock(t, servers, "revoke", path+"-plain"); code != exitError || !strings.Contains(errOut, "--revocable") {
		t.Errorf("revoke of a plain run: exit %d, stderr %q; want %d and a hint naming run --revocable", code, errOut, exitError)
	}
	select {
	case <-plain.done:
		t.Errorf("a plain run ended on a refused revocation; stderr %q", plain.errOut.String())
	default:
	}

	for _, tc := range []struct{ flags, waiter []string }{
		{[]string{"--revocable"}, []string{"run"}},
		{[]string{"--revocable", "--shared"}, []string{"run", "--write"}}, // a writer waits behind the reader
	} {
		flags := tc.flags
		holder := holdLock(t, servers, path, flags...)
		waiter := start(t, servers, append(tc.waiter, path, "--", "true")...)
		awaitQueue(t, servers, path, 1, 1)
		code, out, errOut := runZklock(t, servers, "revoke", path)
		if code != exitOK || !strings.Contains(out, "revocation requested: ") {
			t.Fatalf("%v: revoke: exit %d, stdout %q, stderr %q", flags, code, out, errOut)
		}
		if code := holder.wait(t, 30*time.Second); code != exitLost {
			t.Errorf("%v: the revoked holder exited %d, want %d; stderr %q", flags, code, exitLost, holder.errOut.String())
		}
		for _, want := range []string{"revocation requested for " + path + "; sent SIGTERM to the command",
			path + " was revoked while the command ran; exiting 123"} {
			if !strings.Contains(holder.errOut.String(), want) {
				t.Errorf("%v: holder's stderr %q, want %q", flags, holder.errOut.String(), want)
			}
		}
		if code := waiter.wait(t, 30*time.Second); code != exitOK {
			t.Errorf("%v: the waiter exited %d, want 0; stderr %q", flags, code, waiter.errOut.String())
		}
		awaitQueue(t, servers, path, 0, 0)
	}
}

// A waiter behind a holder asked to release says so, not that the holder
// is "__REVOKE__" (the request overwrote the holder's data).
func TestWaitLineNamesARevocationRequest(t *testing.T) {
	r := report{Holders: []entry{{Session: "0x1", Data: queue.RevokeMessage, Revoke: true}},
		Waiting: []entry{{Session: "0x2"}}}
	if got, want := waitLine(r, 2), "held by session 0x1 (revocation requested), 0 waiting ahead"; got != want {
		t.Errorf("waitLine = %q, want %q", got, want)
	}
}

// nodeOf is the path of a guard's node (guardPath).
func nodeOf(g *zk.CheckOp) string { return guardPath(g) }
