package client

import (
	"context"
	"encoding/binary"
	"errors"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// fakeServer speaks just enough of the protocol to pin edges a real
// server does not produce on demand: it accepts connections, answers the
// connect request with a session, and hands every later request to
// answer, which writes what the test scripts. The real-server tests cover
// the behaviour; these cover the client's handling of a broken stream.
type fakeServer struct {
	ln     net.Listener
	answer func(conn int, xid, op int32, w io.Writer)
	// drop, if set, says whether to close connection conn right after
	// the connect response.
	drop     func(conn int) bool
	accepted atomic.Int32
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func startFake(t *testing.T, answer func(conn int, xid, op int32, w io.Writer)) *fakeServer {
	return startFakeDropping(t, answer, nil)
}

// startFakeDropping starts a fakeServer that closes each connection for
// which drop says so right after answering its connect request.
func startFakeDropping(t *testing.T, answer func(conn int, xid, op int32, w io.Writer), drop func(conn int) bool) *fakeServer {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &fakeServer{ln: ln, answer: answer, drop: drop}
	f.wg.Add(1)
	go f.accept()
	t.Cleanup(func() {
		ln.Close()
		f.mu.Lock()
		for _, c := range f.conns {
			c.Close()
		}
		f.mu.Unlock()
		f.wg.Wait()
	})
	return f
}

func (f *fakeServer) accept() {
	defer f.wg.Done()
	for n := 0; ; n++ {
		c, err := f.ln.Accept()
		if err != nil {
			return
		}
		f.accepted.Add(1)
		f.mu.Lock()
		f.conns = append(f.conns, c)
		f.mu.Unlock()
		f.wg.Add(1)
		go f.serve(n, c)
	}
}

func (f *fakeServer) serve(n int, c net.Conn) {
	defer f.wg.Done()
	defer c.Close()
	fr := newFrameReader(c, nil)
	if _, err := fr.next(); err != nil {
		return
	}
	resp := appendInt32(nil, 0)
	resp = appendInt32(resp, 4000)
	resp = appendInt64(resp, 0x77)
	resp = appendBuffer(resp, make([]byte, 16))
	if _, err := c.Write(frameOf(resp)); err != nil {
		return
	}
	if f.drop != nil && f.drop(n) {
		return
	}
	for {
		body, err := fr.next()
		if err != nil || len(body) < 8 {
			return
		}
		f.answer(n, int32(binary.BigEndian.Uint32(body)), int32(binary.BigEndian.Uint32(body[4:])), c)
	}
}

func frameOf(body []byte) []byte {
	return append(binary.BigEndian.AppendUint32(nil, uint32(len(body))), body...)
}

// reply is a reply header and body as a frame.
func reply(xid int32, code int32, body []byte) []byte {
	h := appendInt32(appendInt64(appendInt32(nil, xid), 1), code)
	return frameOf(append(h, body...))
}

func dialFake(t *testing.T, f *fakeServer, states func(State, StateInfo)) *Client {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	c, err := Dial(ctx, Config{Servers: []string{f.ln.Addr().String()}, Timeout: 4 * time.Second, OnState: states})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestReplyOutOfOrder: a reply that does not answer the oldest request in
// flight breaks the stream: the client drops the connection, fails the
// requests in flight with ErrConnectionLoss, and goes on on a new one.
func TestReplyOutOfOrder(t *testing.T) {
	var mu sync.Mutex
	var held []int32
	f := startFake(t, func(conn int, xid, op int32, w io.Writer) {
		if op == opPing || conn > 0 { // pings, and the next connection, behave
			_, _ = w.Write(reply(xid, 0, nil)) // a delete's reply has no body
			return
		}
		mu.Lock()
		held = append(held, xid)
		if len(held) == 2 { // answer the second first
			_, _ = w.Write(reply(held[1], 0, nil))
		}
		mu.Unlock()
	})
	c := dialFake(t, f, nil)
	ctx := context.Background()
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- c.Delete(ctx, "/x", -1) }()
	}
	for range 2 {
		if err := <-errs; !errors.Is(err, ErrConnectionLoss) {
			t.Fatalf("request on the broken stream: %v", err)
		}
	}
	if err := c.Delete(ctx, "/x", -1); err != nil {
		t.Fatalf("request on the next connection: %v", err)
	}
}

// TestRestoreRefused: watches the server does not restore after a
// reconnect (its setWatches reply is an error) end with that error, so
// that their owners look again.
func TestRestoreRefused(t *testing.T) {
	var once sync.Once
	firstConn := make(chan net.Conn, 1)
	f := startFake(t, func(conn int, xid, op int32, w io.Writer) {
		switch op {
		case opGetData: // the node exists: data and a Stat
			body := appendBuffer(nil, []byte("d"))
			body = append(body, make([]byte, 68)...)
			_, _ = w.Write(reply(xid, 0, body))
			once.Do(func() { firstConn <- w.(net.Conn) })
		case opSetWatches, opSetWatches2:
			_, _ = w.Write(reply(xid, -6, nil))
		default:
			_, _ = w.Write(reply(xid, 0, nil))
		}
	})
	c := dialFake(t, f, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_, _, w, err := c.GetW(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	(<-firstConn).Close() // the client reconnects and asks for the watch again
	ev, err := w.Next(ctx)
	if err != nil || ev.Type != EventNotWatching || !errors.Is(ev.Err, ErrUnimplemented) {
		t.Fatalf("watch whose restoration was refused: %+v %v", ev, err)
	}
}
