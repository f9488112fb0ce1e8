package main

import (
	"context"
	pathpkg "path"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock"
)

// status --kind is a check since WatchLock tells the kind from the nodes:
// a PATH in use by another kind fails, as acquiring there would (it was
// read as the kind asked for, and shown as a free read-write lock).
func TestStatusKindChecks(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	path := lockPath(t, "lock")
	m, err := zklock.NewMutex(newSession(t, servers), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := m.Lock(ctx); err != nil {
		t.Fatal(err)
	}
	defer m.Unlock(ctx)
	code, out, errOut := runZklock(t, servers, "status", "--kind", "rwmutex", path)
	if code == exitOK || !strings.Contains(errOut, "in use as a") {
		t.Errorf("status --kind rwmutex of a held mutex: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	code, out, errOut = runZklock(t, servers, "status", "--kind", "mutex", path)
	if code != exitOK || !strings.Contains(out, pathpkg.Base(nodeOf(m.Guard()))) {
		t.Errorf("status --kind mutex of a held mutex: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
