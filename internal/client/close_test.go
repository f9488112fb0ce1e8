package client_test

import (
	"context"
	"errors"
	"net"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
	"go.uber.org/goleak"
)

// TestCloseEndsSession: Close asks the server to end the session, so its
// ephemeral node is gone when Close returns; watches end with ErrClosed;
// StateClosed is the last state; requests after Close fail with
// ErrClosed; Close is idempotent; no goroutine of the client is left.
func TestCloseEndsSession(t *testing.T) {
	before := goleak.IgnoreCurrent()
	other := dial(t, nil, client.Config{})
	ctx := bounded(t)
	st := newStates()
	c, err := client.Dial(ctx, client.Config{Servers: shared.Servers(), Timeout: testTimeout, OnState: st.on})
	if err != nil {
		t.Fatal(err)
	}
	dir := root(t, other)
	if _, _, err := c.Create(ctx, dir+"/eph", nil, client.ModeEphemeral, open); err != nil {
		t.Fatal(err)
	}
	_, _, w, err := c.GetW(ctx, dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := other.Exists(ctx, dir+"/eph"); err != nil || ok {
		t.Fatalf("ephemeral node after Close: %v %v", ok, err)
	}
	if ev := next(t, w); ev.Type != client.EventNotWatching || !errors.Is(ev.Err, client.ErrClosed) {
		t.Fatalf("watch at Close: %+v", ev)
	}
	if _, _, err := c.Get(ctx, dir); !errors.Is(err, client.ErrClosed) {
		t.Fatalf("get after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if closed, _ := st.count(client.StateClosed); closed != 1 {
		t.Fatalf("StateClosed reported %d times", closed)
	}
	st.mu.Lock()
	if last := st.seen[len(st.seen)-1]; last != client.StateClosed {
		t.Errorf("last state %v", last)
	}
	st.mu.Unlock()
	goleak.VerifyNone(t, before, goleak.IgnoreCurrent())
}

// TestCloseWhileDisconnected: Close of a client that cannot reach any
// server fails its waiting requests with ErrClosed and reports
// StateClosed last (goleak checks that no goroutine is left).
func TestCloseWhileDisconnected(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	st := newStates()
	ctx := bounded(t)
	c, err := client.Dial(ctx, client.Config{Servers: p.Addrs(), Timeout: testTimeout, OnState: st.on})
	if err != nil {
		t.Fatal(err)
	}
	p.Refuse(true)
	p.Reset()
	st.wait(t, client.StateDisconnected, 1)
	got := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, "/")
		got <- err
	}()
	waitQueued(t, c, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, client.ErrClosed) {
		t.Fatalf("waiting request at Close: %v", err)
	}
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.seen[len(st.seen)-1] != client.StateClosed {
		t.Fatalf("last state %v", st.seen[len(st.seen)-1])
	}
}

// TestDialFailure: Dial to a port nobody listens on reports each failed
// attempt (StateDisconnected with the cause) and, when its ctx ends,
// returns an error that wraps both ctx's and the last attempt's
// (syscall.ECONNREFUSED); nothing is left running. A bad configuration is
// refused at once.
func TestDialFailure(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close()
	st := newStates()
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	_, err = client.Dial(ctx, client.Config{Servers: []string{addr}, Timeout: time.Second, OnState: st.on})
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("dial to a closed port: %v", err)
	}
	if info, ok := st.last(client.StateDisconnected); !ok || info.Server != addr || !errors.Is(info.Err, syscall.ECONNREFUSED) {
		t.Fatalf("failed attempt reported as %+v", info)
	}
	if n, _ := st.count(client.StateClosed); n != 1 {
		t.Fatal("the failed Dial did not close the client")
	}
	for _, cfg := range []client.Config{{Timeout: time.Second}, {Servers: []string{addr}}, {Servers: []string{""}, Timeout: time.Second},
		{Servers: []string{addr}, Timeout: time.Second, MaxPacket: -1},
		{Servers: []string{addr}, Timeout: time.Second, MaxPacket: client.MaxMaxPacket + 1}} {
		if _, err := client.Dial(ctx, cfg); !errors.Is(err, client.ErrInvalidConfig) {
			t.Errorf("Dial(%+v): %v, want ErrInvalidConfig", cfg, err)
		}
	}
}

// TestNoGoroutinePerRequest: the client runs two goroutines while
// connected (its connection loop, which writes, and the reader), however
// many requests are in flight.
func TestNoGoroutinePerRequest(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	c := dial(t, p.Addrs(), client.Config{})
	ctx := bounded(t)
	p.Blackhole()
	const n = 200
	errs := make(chan error, n)
	for range n {
		go func() {
			_, _, err := c.Get(ctx, "/")
			errs <- err
		}()
	}
	waitInFlight(t, c, n)
	loops, readers := clientGoroutines()
	if loops != 1 || readers != 1 {
		t.Fatalf("%d connection loops and %d readers with %d requests in flight", loops, readers, n)
	}
	p.Heal()
	for range n {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}

// clientGoroutines counts the goroutines running the client's connection
// loop and its reader, in this process.
func clientGoroutines() (loops, readers int) {
	buf := make([]byte, 1<<20)
	for {
		n := runtime.Stack(buf, true)
		if n < len(buf) {
			buf = buf[:n]
			break
		}
		buf = make([]byte, 2*len(buf))
	}
	for _, g := range strings.Split(string(buf), "\n\n") {
		if strings.Contains(g, "internal/client.(*Client).run(") {
			loops++
		}
		if strings.Contains(g, "internal/client.(*reader).run(") {
			readers++
		}
	}
	return loops, readers
}

// TestCloseInFlight: Close of a client whose server has fallen silent
// waits at most about a second for closeSession, then fails the request
// in flight with ErrClosed (its outcome unknown).
func TestCloseInFlight(t *testing.T) {
	p := zktest.NewProxy(t, shared.Servers())
	ctx := bounded(t)
	c, err := client.Dial(ctx, client.Config{Servers: p.Addrs(), Timeout: testTimeout})
	if err != nil {
		t.Fatal(err)
	}
	p.Blackhole()
	got := make(chan error, 1)
	go func() {
		_, _, err := c.Get(ctx, "/")
		got <- err
	}()
	waitInFlight(t, c, 1)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-got; !errors.Is(err, client.ErrClosed) {
		t.Fatalf("request in flight at Close: %v", err)
	}
}
