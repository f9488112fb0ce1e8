package client_test

import (
	"errors"
	"testing"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// TestDigestAuth: a node whose ACL grants a digest identity alone is
// readable by a client that authenticated as it (by Config.Credentials,
// or by AddAuth later) and refused to one that did not; the credential is
// sent again after a reconnect, before any queued request.
func TestDigestAuth(t *testing.T) {
	alice := []byte("alice:secret")
	owner := dial(t, nil, client.Config{Credentials: []client.Credential{{Scheme: "digest", Auth: alice}}})
	ctx := bounded(t)
	dir := root(t, owner)
	p := dir + "/private"
	if _, _, err := owner.Create(ctx, p, []byte("x"), client.ModePersistent, client.DigestACL(client.PermAll, "alice", "secret")); err != nil {
		t.Fatal(err)
	}
	if _, _, err := owner.Create(ctx, dir+"/mine", nil, client.ModePersistent, client.AuthACL(client.PermAll)); err != nil {
		t.Fatalf("create with the auth scheme's ACL by an authenticated client: %v", err)
	}
	if acl, _, err := owner.GetACL(ctx, dir+"/mine"); err != nil || len(acl) != 1 || acl[0].Scheme != "digest" || acl[0].ID != client.DigestACL(0, "alice", "secret")[0].ID {
		t.Fatalf("the auth ACL became %v (%v), want alice's digest", acl, err)
	}
	if _, _, err := owner.Get(ctx, p); err != nil {
		t.Fatalf("owner's get: %v", err)
	}

	px := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	c := dial(t, px.Addrs(), client.Config{OnState: st.on})
	if _, _, err := c.Get(ctx, p); !errors.Is(err, client.ErrNoAuth) {
		t.Fatalf("get without auth: %v, want ErrNoAuth", err)
	}
	if err := c.AddAuth(ctx, "digest", []byte("mallory:guess")); err != nil {
		t.Fatalf("digest auth always succeeds, whatever the password: %v", err)
	}
	if _, _, err := c.Get(ctx, p); !errors.Is(err, client.ErrNoAuth) {
		t.Fatalf("get as another identity: %v, want ErrNoAuth", err)
	}
	if err := c.AddAuth(ctx, "digest", alice); err != nil {
		t.Fatal(err)
	}
	if data, _, err := c.Get(ctx, p); err != nil || string(data) != "x" {
		t.Fatalf("get after AddAuth: %q %v", data, err)
	}

	// Reconnect with requests queued: they run after the credentials.
	px.Refuse(true)
	px.Reset()
	st.wait(t, client.StateDisconnected, 1)
	got := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, p)
		got <- err
	}()
	waitQueued(t, c, 1)
	px.Refuse(false)
	if err := <-got; err != nil {
		t.Fatalf("get queued across the reconnect: %v", err)
	}
}

// TestAuthFailed: a credential the server rejects (a scheme it has no
// provider for) is final: Dial fails with ErrAuthFailed; a client whose
// AddAuth is rejected reports StateAuthFailed then StateClosed, and every
// request fails with ErrAuthFailed.
func TestAuthFailed(t *testing.T) {
	ctx := bounded(t)
	_, err := client.Dial(ctx, client.Config{Servers: shared.Servers(), Timeout: testTimeout,
		Credentials: []client.Credential{{Scheme: "nosuchscheme", Auth: []byte("x")}}})
	if !errors.Is(err, client.ErrAuthFailed) {
		t.Fatalf("dial with a rejected credential: %v", err)
	}

	st := newStates()
	c := dial(t, nil, client.Config{OnState: st.on})
	dir := root(t, c)
	_, _, w, err := c.GetW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.AddAuth(ctx, "nosuchscheme", []byte("x")); !errors.Is(err, client.ErrAuthFailed) {
		t.Fatalf("rejected AddAuth: %v", err)
	}
	st.wait(t, client.StateClosed, 1)
	if n, _ := st.count(client.StateAuthFailed); n != 1 {
		t.Fatalf("StateAuthFailed reported %d times", n)
	}
	if _, _, err := c.Get(ctx, dir); !errors.Is(err, client.ErrAuthFailed) {
		t.Fatalf("request after the failure: %v", err)
	}
	if ev := next(t, w); ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrAuthFailed) {
		t.Fatalf("watch at the failure: %+v", ev)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
}
