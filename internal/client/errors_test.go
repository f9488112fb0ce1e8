package client_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// TestServerErrors: each request the server refuses fails with an *Error
// that names the request and the path, wraps the sentinel of the server's
// code, and reads "zklock: zk: ...".
func TestServerErrors(t *testing.T) {
	c := dial(t, nil, client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	eph := dir + "/eph"
	if _, _, err := c.Create(ctx, eph, nil, client.ModeEphemeral, open); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Create(ctx, dir+"/full", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Create(ctx, dir+"/full/child", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		do   func() error
		op   string
		path string
		want error
	}{
		{"get missing", func() error { _, _, err := c.Get(ctx, dir+"/none"); return err }, "get", dir + "/none", client.ErrNoNode},
		{"create exists", func() error {
			_, _, err := c.Create(ctx, eph, nil, client.ModePersistent, open)
			return err
		}, "create", eph, client.ErrNodeExists},
		{"create without parent", func() error {
			_, _, err := c.Create(ctx, dir+"/none/x", nil, client.ModePersistent, open)
			return err
		}, "create", dir + "/none/x", client.ErrNoNode},
		{"child of ephemeral", func() error {
			_, _, err := c.Create(ctx, eph+"/x", nil, client.ModePersistent, open)
			return err
		}, "create", eph + "/x", client.ErrNoChildrenForEphemerals},
		{"empty ACL", func() error {
			_, _, err := c.Create(ctx, dir+"/noacl", nil, client.ModePersistent, nil)
			return err
		}, "create", dir + "/noacl", client.ErrInvalidACL},
		{"auth ACL without auth", func() error {
			_, _, err := c.Create(ctx, dir+"/authacl", nil, client.ModePersistent, client.AuthACL(client.PermAll))
			return err
		}, "create", dir + "/authacl", client.ErrInvalidACL},
		{"delete not empty", func() error { return c.Delete(ctx, dir+"/full", -1) }, "delete", dir + "/full", client.ErrNotEmpty},
		{"delete bad version", func() error { return c.Delete(ctx, eph, 7) }, "delete", eph, client.ErrBadVersion},
		{"set missing", func() error { _, err := c.Set(ctx, dir+"/none", nil, -1); return err }, "set", dir + "/none", client.ErrNoNode},
		{"children missing", func() error { _, _, err := c.Children(ctx, dir+"/none"); return err }, "children", dir + "/none", client.ErrNoNode},
		{"server-side invalid path", func() error {
			_, _, err := c.Create(ctx, dir+"/", nil, client.ModePersistent, open)
			return err
		}, "create", dir + "/", client.ErrBadArguments},
		{"client-side invalid path", func() error { _, _, err := c.Get(ctx, "relative"); return err }, "get", "relative", client.ErrBadArguments},
		{"TTL mode in Create", func() error {
			_, _, err := c.Create(ctx, dir+"/ttl", nil, client.ModePersistentTTL, open)
			return err
		}, "create", dir + "/ttl", client.ErrBadArguments},
		{"TTL mode without TTL", func() error {
			_, _, err := c.CreateTTL(ctx, dir+"/ttl", nil, client.ModePersistentTTL, open, 0)
			return err
		}, "create", dir + "/ttl", client.ErrBadArguments},
		{"ephemeral TTL", func() error {
			_, _, err := c.CreateTTL(ctx, dir+"/ttl", nil, client.ModeEphemeral, open, time.Minute)
			return err
		}, "create", dir + "/ttl", client.ErrBadArguments},
		{"remove no watch", func() error {
			// A watch removed twice: the server's NoWatcher is success.
			_, _, w, err := c.ExistsW(ctx, dir+"/none")
			if err != nil {
				return err
			}
			if err := w.Remove(ctx); err != nil {
				return err
			}
			return w.Remove(ctx)
		}, "", "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.do()
			if tc.want == nil {
				if err != nil {
					t.Fatalf("got %v, want success", err)
				}
				return
			}
			if !errors.Is(err, tc.want) {
				t.Fatalf("got %v, want %v", err, tc.want)
			}
			var ze *client.Error
			if !errors.As(err, &ze) || ze.Op != tc.op || ze.Path != tc.path {
				t.Fatalf("got %#v, want an *Error for %s %s", err, tc.op, tc.path)
			}
			if msg := err.Error(); !strings.HasPrefix(msg, "zklock: zk: "+tc.op+" "+tc.path+": ") || strings.Count(msg, "zklock:") != 1 {
				t.Fatalf("message %q", msg)
			}
		})
	}
}

// TestErrorSentinelsAreDistinct: every sentinel is its own error, so that
// errors.Is tells them apart, and each reads "zklock: zk: ...".
func TestErrorSentinelsAreDistinct(t *testing.T) {
	all := []error{
		client.ErrSystemError, client.ErrRuntimeInconsistency, client.ErrDataInconsistency,
		client.ErrConnectionLoss, client.ErrMarshallingError, client.ErrUnimplemented,
		client.ErrOperationTimeout, client.ErrBadArguments, client.ErrUnknownSession,
		client.ErrNewConfigNoQuorum, client.ErrReconfigInProgress, client.ErrAPIError,
		client.ErrNoNode, client.ErrNoAuth, client.ErrBadVersion, client.ErrNoChildrenForEphemerals,
		client.ErrNodeExists, client.ErrNotEmpty, client.ErrSessionExpired, client.ErrInvalidCallback,
		client.ErrInvalidACL, client.ErrAuthFailed, client.ErrSessionMoved, client.ErrNotReadOnly,
		client.ErrEphemeralOnLocalSession, client.ErrNoWatcher, client.ErrRequestTimeout,
		client.ErrReconfigDisabled, client.ErrSessionClosedRequireSASLAuth, client.ErrQuotaExceeded,
		client.ErrThrottledOp, client.ErrClosed, client.ErrRolledBack, client.ErrWatchRemoved,
		client.ErrWatchEnded, client.ErrInvalidConfig,
	}
	for i, a := range all {
		if !strings.HasPrefix(a.Error(), "zklock: zk: ") {
			t.Errorf("%q lacks the prefix", a)
		}
		for j, b := range all {
			if i != j && errors.Is(a, b) {
				t.Errorf("%v is %v", a, b)
			}
		}
	}
}
