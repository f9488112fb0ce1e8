package client_test

import (
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// TestServerBehindLastZxid: a client moved to a server behind the last
// zxid it read is refused by it on every attempt ("client has seen zxid",
// the server closes the connection). Once no server has resumed the
// session for longer than twice its timeout, the client expires it locally
// (StateExpired with ErrExpiredLocally, not before twice the timeout), the
// request queued for it fails with ErrSessionExpired, its watch ends with
// it, and, its last zxid
// forgotten, it goes on with a new session on that server.
func TestServerBehindLastZxid(t *testing.T) {
	behind := startServer(t) // a server of its own: its zxid is that of a fresh one
	p := zktest.NewProxy(t, append(shared.Servers(), behind.Servers()...))
	p.Only(0)
	st := newStates()
	const timeout = 2 * time.Second
	c := dial(t, p.Addrs(), client.Config{Timeout: timeout, OnState: st.on})
	ctx := bounded(t)
	dir := root(t, c)
	for i := range 20 { // the shared server's zxid is now well ahead of the fresh one's
		if _, _, err := c.Create(ctx, fmt.Sprintf("%s/n%d", dir, i), nil, client.ModePersistent, open); err != nil {
			t.Fatal(err)
		}
	}
	old := c.SessionID()
	_, _, w, err := c.GetW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}

	disconnected, _ := st.count(client.StateDisconnected) // an attempt on the other server may have failed
	lost := time.Now()
	p.Only(1)
	st.wait(t, client.StateDisconnected, disconnected+1)
	queued := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, dir)
		queued <- err
	}()
	st.wait(t, client.StateExpired, 1)
	took := time.Since(lost)
	info, _ := st.last(client.StateExpired)
	t.Logf("expired locally %v after the move (timeout %v)", took, c.Timeout())
	if info.SessionID != old || !errors.Is(info.Err, client.ErrExpiredLocally) || !errors.Is(info.Err, client.ErrSessionExpired) {
		t.Fatalf("expiry of 0x%x: %+v", old, info)
	}
	if took < 2*c.Timeout() {
		t.Fatalf("expired locally %v after the last connection ended, before twice the session timeout %v", took, c.Timeout())
	}
	if err := <-queued; !errors.Is(err, client.ErrSessionExpired) {
		t.Fatalf("request queued for the expired session: %v", err)
	}
	if ev := next(t, w); ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrSessionExpired) {
		t.Fatalf("watch of the expired session: %+v", ev)
	}
	st.wait(t, client.StateConnected, 2)
	if now, _ := st.last(client.StateConnected); now.SessionID == old || now.Server != p.Addrs()[1] {
		t.Fatalf("new session 0x%x on %s, old 0x%x", now.SessionID, now.Server, old)
	}
	if _, ok, err := c.Exists(ctx, dir); err != nil || ok {
		t.Fatalf("the server behind: %v %v", ok, err)
	}
}
