package client_test

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// TestCancelBlackholed: a request to a server that does not answer (a
// blackhole: the connection stays up, silent) returns its ctx's error when
// ctx ends, long before the client gives up on the connection; its reply,
// when it comes after Heal, is dropped, and the client carries on with
// the same session.
func TestCancelBlackholed(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	c := dial(t, p.Addrs(), client.Config{OnState: st.on})
	ctx := bounded(t)
	dir := root(t, c)
	sid := c.SessionID()

	p.Blackhole()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	_, _, err := c.Create(short, dir+"/x", nil, client.ModePersistent, open)
	// It returned for its ctx, not for the connection, which is still up
	// (its read timeout is 2/3 of 10s).
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("create to a blackhole: %v, want context.DeadlineExceeded", err)
	}
	if n, _ := st.count(client.StateDisconnected); n != 0 {
		t.Fatal("the connection was given up before the request returned")
	}
	p.Heal()
	if _, _, err := c.Get(ctx, dir); err != nil {
		t.Fatalf("get after heal: %v", err)
	}
	if n, _ := st.count(client.StateDisconnected); n != 0 || c.SessionID() != sid {
		t.Fatalf("the connection was lost (%d) or the session changed", n)
	}
	// The cancelled create reached the server (its bytes were held, not
	// dropped): its outcome was unknown to the caller, not undone.
	if _, ok, err := c.Exists(ctx, dir+"/x"); err != nil || !ok {
		t.Fatalf("the create the caller gave up on: exists %v %v", ok, err)
	}
}

// TestCancelSlow: with 300ms each way on the wire, a request whose ctx
// ends after 50ms returns then, and requests behind it on the connection
// are answered in order.
func TestCancelSlow(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	c := dial(t, p.Addrs(), client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	p.SetLatency(300 * time.Millisecond)
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, _, err := c.Get(short, dir); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("slow get: %v", err)
	}
	if _, _, err := c.Create(ctx, dir+"/after", nil, client.ModePersistent, open); err != nil {
		t.Fatalf("create after the cancelled get: %v", err)
	}
}

// TestRequestsWaitWhileDisconnected: requests made while no server can be
// reached wait for a connection (they do not fail at once), a request
// whose ctx ends while it waits returns ctx's error and is never sent,
// and the others complete once a server is reachable again.
func TestRequestsWaitWhileDisconnected(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	c := dial(t, p.Addrs(), client.Config{OnState: st.on})
	ctx := bounded(t)
	dir := root(t, c)

	p.Refuse(true)
	p.Reset()
	st.wait(t, client.StateDisconnected, 3) // the loss and two failed attempts
	created := make(chan error, 1)
	go func() {
		_, _, err := c.Create(ctx, dir+"/queued", nil, client.ModePersistent, open)
		created <- err
	}()
	gaveUp := make(chan error, 1)
	short, cancel := context.WithCancel(ctx)
	go func() {
		_, _, err := c.Create(short, dir+"/abandoned", nil, client.ModePersistent, open)
		gaveUp <- err
	}()
	waitQueued(t, c, 2)
	cancel()
	if err := <-gaveUp; !errors.Is(err, context.Canceled) {
		t.Fatalf("abandoned request: %v", err)
	}
	n, _ := st.count(client.StateDisconnected)
	st.wait(t, client.StateDisconnected, n+2) // two more attempts fail: still waiting
	select {
	case err := <-created:
		t.Fatalf("a request failed while disconnected: %v", err)
	default:
	}
	p.Refuse(false)
	if err := <-created; err != nil {
		t.Fatalf("queued request after reconnect: %v", err)
	}
	if _, ok, err := c.Exists(ctx, dir+"/abandoned"); err != nil || ok {
		t.Fatalf("the abandoned request was sent: %v %v", ok, err)
	}
}

// TestInFlightLoss: a request in flight when its connection is lost fails
// with ErrConnectionLoss, naming its path. Its outcome is unknown: the
// proxy delivered it to the server, which applies it if it read it before
// the session's new connection made it close the old one (both happen in
// this test), so the client must not report it failed or done.
func TestInFlightLoss(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	c := dial(t, p.Addrs(), client.Config{})
	ctx := bounded(t)
	dir := root(t, c)
	p.ResetAfterRequest(func(op int32) bool { return op == 15 }) // create2
	_, _, err := c.Create(ctx, dir+"/lost", nil, client.ModePersistent, open)
	var ze *client.Error
	if !errors.Is(err, client.ErrConnectionLoss) || !errors.As(err, &ze) || ze.Path != dir+"/lost" || ze.Op != "create" {
		t.Fatalf("create whose reply was lost: %v", err)
	}
	if _, _, err := c.Get(ctx, dir); err != nil {
		t.Fatalf("the next request, on the next connection: %v", err)
	}
}

// TestReadTimeout: a connection on which the server falls silent (a
// blackhole) is given up after two thirds of the session timeout, with a
// deadline error, while the session can still be resumed: after Heal the
// client is back on the same session.
func TestReadTimeout(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	c := dial(t, p.Addrs(), client.Config{Timeout: 3 * time.Second, OnState: st.on})
	sid := c.SessionID()
	p.Blackhole()
	st.wait(t, client.StateDisconnected, 1)
	info, _ := st.last(client.StateDisconnected)
	if !errors.Is(info.Err, os.ErrDeadlineExceeded) {
		t.Fatalf("silent connection given up with %v, want a read deadline", info.Err)
	}
	p.Heal()
	st.wait(t, client.StateConnected, 2)
	if c.SessionID() != sid {
		t.Fatalf("session 0x%x after the silence, want 0x%x", c.SessionID(), sid)
	}
	if n, _ := st.count(client.StateExpired); n != 0 {
		t.Fatal("the session expired")
	}
}

// TestCancelledArgumentsMayBeReused: a caller whose call returned for its
// ctx may overwrite the data it passed at once, though the request is
// still on its way: what reaches the server is what was passed. (A request
// is encoded before its call waits; this run does not force the writer to
// take the request after the call returned, which the old design, encoding
// in the writer, would have raced on.)
func TestCancelledArgumentsMayBeReused(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	c := dial(t, p.Addrs(), client.Config{OnState: st.on})
	ctx := bounded(t)
	dir := root(t, c)
	if _, _, err := c.Create(ctx, dir+"/n", nil, client.ModePersistent, open); err != nil {
		t.Fatal(err)
	}
	p.Blackhole()
	buf := []byte("original")
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	if _, err := c.Set(short, dir+"/n", buf, -1); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("set to a blackhole: %v", err)
	}
	copy(buf, "REUSED!!")
	p.Heal()
	data, _, err := c.Get(ctx, dir+"/n")
	if err != nil || string(data) != "original" {
		t.Fatalf("the abandoned set wrote %q (%v), want the bytes passed", data, err)
	}
}

// TestStopBlackholed: a request whose ctx carries a stop channel
// (WithStop) returns ErrStopped when the channel closes while the server
// does not answer, and ctx's error rather than ErrStopped when ctx ended
// too; a request made with the channel already closed is never sent.
func TestStopBlackholed(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	c := dial(t, p.Addrs(), client.Config{})
	ctx := bounded(t)
	dir := root(t, c)

	p.Blackhole()
	stop := make(chan struct{})
	timer := time.AfterFunc(100*time.Millisecond, func() { close(stop) })
	defer timer.Stop()
	err := c.Delete(client.WithStop(ctx, stop), dir+"/absent", -1)
	if !errors.Is(err, client.ErrStopped) {
		t.Fatalf("delete to a blackhole, stopped: %v, want ErrStopped", err)
	}
	ended, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := c.Get(client.WithStop(ended, stop), dir); !errors.Is(err, context.Canceled) {
		t.Fatalf("get with ctx ended and stop closed: %v, want context.Canceled", err)
	}
	// Made stopped: never sent, so the node it names is never created.
	_, _, err = c.Create(client.WithStop(ctx, stop), dir+"/never", nil, client.ModePersistent, open)
	if !errors.Is(err, client.ErrStopped) {
		t.Fatalf("create made stopped: %v, want ErrStopped", err)
	}
	p.Heal()
	if _, ok, err := c.Exists(ctx, dir+"/never"); err != nil || ok {
		t.Fatalf("the create made stopped reached the server: exists %v %v", ok, err)
	}
}
