package client

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// The adversarial review's tests (round 45). Tests named
// TestReviewBreak_... are findings, left failing; TestReview_... are
// attacks that held.

// rfake is a scripted server whose script owns each whole connection,
// the handshake included.
type rfake struct {
	ln       net.Listener
	accepted atomic.Int32
	wg       sync.WaitGroup
	mu       sync.Mutex
	conns    []net.Conn
}

func startRFake(t *testing.T, script func(n int, c net.Conn, fr *frameReader)) *rfake {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	f := &rfake{ln: ln}
	f.wg.Add(1)
	go func() {
		defer f.wg.Done()
		for n := 0; ; n++ {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			f.accepted.Add(1)
			f.mu.Lock()
			f.conns = append(f.conns, c)
			f.mu.Unlock()
			f.wg.Add(1)
			go func() {
				defer f.wg.Done()
				defer c.Close()
				script(n, c, newFrameReader(c, nil))
			}()
		}
	}()
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

func (f *rfake) addr() string { return f.ln.Addr().String() }

// connectReq is what a connect request asked.
type connectReq struct {
	lastZxid int64
	timeout  int32
	sid      int64
}

func readConnect(fr *frameReader) (connectReq, bool) {
	b, err := fr.next()
	if err != nil || len(b) < 24 {
		return connectReq{}, false
	}
	return connectReq{
		lastZxid: int64(binary.BigEndian.Uint64(b[4:])),
		timeout:  int32(binary.BigEndian.Uint32(b[12:])),
		sid:      int64(binary.BigEndian.Uint64(b[16:])),
	}, true
}

func writeConnect(c net.Conn, timeoutMs int32, sid int64) error {
	resp := appendInt32(nil, 0)
	resp = appendInt32(resp, timeoutMs)
	resp = appendInt64(resp, sid)
	resp = appendBuffer(resp, make([]byte, 16))
	_, err := c.Write(frameOf(resp))
	return err
}

// req is one request as the server read it.
type req struct {
	xid, op int32
	body    []byte
}

func readReq(fr *frameReader) (req, bool) {
	b, err := fr.next()
	if err != nil || len(b) < 8 {
		return req{}, false
	}
	return req{int32(binary.BigEndian.Uint32(b)), int32(binary.BigEndian.Uint32(b[4:])), append([]byte(nil), b[8:]...)}, true
}

func replyZ(xid int32, zxid int64, code int32, body []byte) []byte {
	h := appendInt32(appendInt64(appendInt32(nil, xid), zxid), code)
	return frameOf(append(h, body...))
}

func getDataBody(data []byte) []byte {
	return append(appendBuffer(nil, data), make([]byte, 68)...)
}

func notification(typ int32, path string) []byte {
	b := appendInt32(appendInt64(appendInt32(nil, xidNotification), -1), 0)
	b = appendInt32(appendInt32(b, typ), 3)
	b = appendString(b, path)
	return frameOf(b)
}

// serveBasic answers every request: getData with data "d", others empty.
func serveBasic(c net.Conn, fr *frameReader, zxid int64) {
	for {
		r, ok := readReq(fr)
		if !ok {
			return
		}
		body := []byte(nil)
		if r.op == opGetData {
			body = getDataBody([]byte("d"))
		}
		if _, err := c.Write(replyZ(r.xid, zxid, 0, body)); err != nil {
			return
		}
	}
}

func rdial(t *testing.T, addr string, cfg Config) *Client {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	cfg.Servers = []string{addr}
	if cfg.Timeout == 0 {
		cfg.Timeout = 4 * time.Second
	}
	c, err := Dial(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// Claim (doc.go, reconnect pacing): "A connection that carried no reply
// beyond the connect response (a server that accepts the session and
// drops it) is a failed attempt, so such a server is not reconnected to
// in a loop." Attack: the server accepts the session, answers the one
// ping the client itself primes every new connection with, then drops.
// The connection "carried a reply", so the pacing resets to a random
// part of 50ms every time: a loop. Measured: connections in 3 s, against
// the at most ~8 a doubling backoff capped at 1 s allows.
func TestReviewBreak_PingThenDropReconnectLoop(t *testing.T) {
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		if n == 0 {
			serveBasic(c, fr, 5) // Dial's connection serves
			return
		}
		r, ok := readReq(fr) // the priming ping
		if !ok {
			return
		}
		_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
		time.Sleep(5 * time.Millisecond)
	})
	c := rdial(t, f.addr(), Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := c.Get(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.conns[0].Close() // from here every connection is ping-then-drop
	f.mu.Unlock()
	start := f.accepted.Load()
	time.Sleep(3 * time.Second)
	n := f.accepted.Load() - start
	t.Logf("connections to a server that answers one ping then drops, in 3 s: %d", n)
	if n > 20 {
		t.Fatalf("a server that accepts, answers the client's priming ping and drops was reconnected to %d times in 3 s (backoff never grows)", n)
	}
}

// Claim: the client "resumes the session with its id, password and last
// zxid, until the server says the session has expired; then it starts a
// new one", and "Nothing from the peer is trusted". Attack: a resume
// answered with another session id (and a valid timeout). Whatever the
// client does, it must not go on as if the old session (and its watches)
// lived: either StateExpired is reported, or the connection is refused.
func TestReviewBreak_ResumeAnsweredWithOtherSession(t *testing.T) {
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		sid := int64(0x77)
		if n > 0 {
			sid = 0x99 // a different session, not a refusal
		}
		if writeConnect(c, 4000, sid) != nil {
			return
		}
		if n == 0 {
			// Answer the watch, then drop.
			for {
				r, ok := readReq(fr)
				if !ok {
					return
				}
				if r.op == opGetData {
					_, _ = c.Write(replyZ(r.xid, 5, 0, getDataBody([]byte("d"))))
					return
				}
				_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
			}
		}
		serveBasic(c, fr, 5)
	})
	var mu sync.Mutex
	var states []State
	var sids []int64
	c := rdial(t, f.addr(), Config{OnState: func(s State, i StateInfo) {
		mu.Lock()
		states = append(states, s)
		sids = append(sids, i.SessionID)
		mu.Unlock()
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, w, err := c.GetW(ctx, "/n")
	if err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for c.SessionID() != 0x99 && time.Now().Before(deadline) {
		time.Sleep(10 * time.Millisecond)
	}
	time.Sleep(200 * time.Millisecond)
	mu.Lock()
	defer mu.Unlock()
	expired := false
	for _, s := range states {
		if s == StateExpired {
			expired = true
		}
	}
	ended := false
	select {
	case <-w.Ready():
		ev, _ := w.Next(ctx)
		ended = ev.Type == EventNotWatching
	default:
	}
	t.Logf("states %v sessions %x; session now 0x%x; StateExpired %v; watch ended %v", states, sids, c.SessionID(), expired, ended)
	if c.SessionID() == 0x99 && (!expired || !ended) {
		t.Fatalf("a resume of session 0x77 answered with session 0x99 was taken silently: no StateExpired (%v), the old session's watch not ended (%v); the client now runs session 0x99", expired, ended)
	}
}

// Claim: "a reply that answers no request in flight ... breaks the
// connection, and the requests in flight fail with ErrConnectionLoss".
// Attacks, each on the first connection while one getData is in flight:
// a reply with an xid never sent, the right reply twice (the duplicate
// arrives with the next request in flight), a ping reply when no ping is
// in flight, a setWatches reply when no restore is in flight, an auth
// reply when no auth is. The client must fail the request in flight (or
// the next one) with ErrConnectionLoss, never hand it another's answer,
// and serve the next connection.
func TestReview_StrayReplies(t *testing.T) {
	for _, tc := range []struct {
		name  string
		stray func(xid int32) []byte
	}{
		{"xid never sent", func(xid int32) []byte { return replyZ(xid+1000, 5, 0, getDataBody([]byte("X"))) }},
		{"duplicate", func(xid int32) []byte {
			return append(replyZ(xid, 5, 0, getDataBody([]byte("d"))), replyZ(xid, 5, 0, getDataBody([]byte("X")))...)
		}},
		{"ping reply unasked", func(xid int32) []byte { return replyZ(xidPing, 5, 0, nil) }},
		{"setWatches reply unasked", func(xid int32) []byte { return replyZ(xidSetWatches, 5, 0, nil) }},
		{"auth reply unasked", func(xid int32) []byte { return replyZ(xidAuth, 5, 0, nil) }},
		{"xid -3", func(xid int32) []byte { return replyZ(-3, 5, 0, getDataBody([]byte("X"))) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
				if _, ok := readConnect(fr); !ok {
					return
				}
				if writeConnect(c, 4000, 0x77) != nil {
					return
				}
				if n > 0 {
					serveBasic(c, fr, 5)
					return
				}
				for {
					r, ok := readReq(fr)
					if !ok {
						return
					}
					if r.op == opGetData {
						if _, err := c.Write(tc.stray(r.xid)); err != nil {
							return
						}
						continue
					}
					_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
				}
			})
			c := rdial(t, f.addr(), Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			var got []string
			var lost int
			for range 3 {
				d, _, err := c.Get(ctx, "/n")
				if errors.Is(err, ErrConnectionLoss) {
					lost++
					continue
				}
				if err != nil {
					t.Fatalf("get: %v", err)
				}
				got = append(got, string(d))
			}
			t.Logf("answers %q, connection losses %d, connections %d", got, lost, f.accepted.Load())
			for _, g := range got {
				if g != "d" {
					t.Fatalf("a get was handed another reply's data %q", g)
				}
			}
			// The duplicate arrives when nothing is in flight: it breaks
			// the connection with no request to fail.
			if f.accepted.Load() < 2 || (lost == 0 && tc.name != "duplicate") {
				t.Fatalf("a stray reply did not break the connection: %d losses, %d connections", lost, f.accepted.Load())
			}
			if len(got) == 0 {
				t.Fatalf("the next connection served nothing")
			}
		})
	}
}

// Claim: "when ctx ends the request returns ctx.Err() at once and its
// reply, if it comes, is dropped". Attack: the server answers a getData
// late, after its caller gave up and after the next getData was sent;
// the next caller must get its own reply (data "2"), not the late one's.
func TestReview_LateReplyOfCancelled(t *testing.T) {
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		var pending []int32
		for {
			r, ok := readReq(fr)
			if !ok {
				return
			}
			if r.op != opGetData {
				_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
				continue
			}
			pending = append(pending, r.xid)
			if len(pending) == 2 { // answer both, in order, now
				_, _ = c.Write(replyZ(pending[0], 5, 0, getDataBody([]byte("1"))))
				_, _ = c.Write(replyZ(pending[1], 5, 0, getDataBody([]byte("2"))))
				pending = nil
			}
		}
	})
	c := rdial(t, f.addr(), Config{})
	for i := range 20 {
		ctx1, cancel1 := context.WithTimeout(context.Background(), 30*time.Millisecond)
		_, _, err := c.Get(ctx1, "/a")
		cancel1()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("round %d: the first get: %v", i, err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, _, err := c.Get(ctx, "/b")
		cancel()
		if err != nil || string(d) != "2" {
			t.Fatalf("round %d: the get after a cancelled one got %q, %v", i, d, err)
		}
	}
	if f.accepted.Load() != 1 {
		t.Fatalf("%d connections", f.accepted.Load())
	}
}

// Claim: Close returns, and ends everything, at any moment; the handshake
// is "cut short by Close". Attack: Close while the client is in a
// handshake with a server that accepted TCP and never answers the connect
// request (the handshake timeout is 10 s here).
func TestReview_CloseDuringConnect(t *testing.T) {
	var first sync.Once
	hung := make(chan struct{})
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		if n > 0 {
			first.Do(func() { close(hung) })
			_, _ = fr.next() // never answers; returns when closed
			return
		}
		if writeConnect(c, 30000, 0x77) != nil {
			return
		}
		_, _ = readReq(fr) // the priming ping, then drop
	})
	var mu sync.Mutex
	var last State = -1
	c := rdial(t, f.addr(), Config{Timeout: 30 * time.Second, HandshakeTimeout: 10 * time.Second, OnState: func(s State, _ StateInfo) {
		mu.Lock()
		last = s
		mu.Unlock()
	}})
	select {
	case <-hung:
	case <-time.After(10 * time.Second):
		t.Fatal("no second connection")
	}
	time.Sleep(50 * time.Millisecond)
	start := time.Now()
	c.Close()
	took := time.Since(start)
	ctx, cancel := context.WithTimeout(context.Background(), time.Second)
	defer cancel()
	_, _, err := c.Get(ctx, "/x")
	mu.Lock()
	defer mu.Unlock()
	t.Logf("Close during a hung handshake took %v; last state %v; get after: %v", took, last, err)
	if took > time.Second || last != StateClosed || !errors.Is(err, ErrClosed) {
		t.Fatalf("Close during a handshake: took %v, last state %v, get after %v", took, last, err)
	}
}

// Claim: "a frame longer than Config.MaxPacket ... plus 1 KiB breaks the
// connection before anything is allocated for it". Attack at the exact
// boundary, MaxPacket 4096: a getData reply whose body is 4096+1024 bytes
// is read; one byte more breaks the connection (ErrConnectionLoss).
func TestReview_FrameLimitBoundary(t *testing.T) {
	const maxPacket = 4096
	for _, tc := range []struct {
		extra int
		ok    bool
	}{{0, true}, {1, false}} {
		bodyLen := maxPacket + packetSlack + tc.extra
		data := make([]byte, bodyLen-16-4-68)
		for i := range data {
			data[i] = 'x'
		}
		f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
			if _, ok := readConnect(fr); !ok {
				return
			}
			if writeConnect(c, 4000, 0x77) != nil {
				return
			}
			for {
				r, ok := readReq(fr)
				if !ok {
					return
				}
				body := []byte(nil)
				if r.op == opGetData {
					body = getDataBody(data)
				}
				_, _ = c.Write(replyZ(r.xid, 5, 0, body))
			}
		})
		c := rdial(t, f.addr(), Config{MaxPacket: maxPacket})
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		d, _, err := c.Get(ctx, "/n")
		cancel()
		t.Logf("body %d bytes (limit %d): %d bytes read, err %v", bodyLen, maxPacket+packetSlack, len(d), err)
		if tc.ok && (err != nil || len(d) != len(data)) {
			t.Fatalf("a frame of exactly the limit was refused: %v", err)
		}
		if !tc.ok && !errors.Is(err, ErrConnectionLoss) {
			t.Fatalf("a frame one byte over the limit: %v", err)
		}
	}
}

// Claim: "The last zxid is that of the last reply to an ordinary request
// ... A setWatches reply (or a ping's) carries the server's newest zxid
// too but does not move it". Attack: the priming ping is answered with
// zxid 500, a getData (setting a watch) with 100, a notification carries
// 700 in its header, the restore's setWatches reply 900, then the
// connection drops before any ordinary reply. Each later connect request
// and restore must carry 100.
func TestReview_LastZxidOnlyFromOrdinaryReplies(t *testing.T) {
	type seen struct {
		connect, restore int64
	}
	got := make(chan seen, 10)
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		cr, ok := readConnect(fr)
		if !ok {
			return
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		s := seen{connect: cr.lastZxid, restore: -1}
		if n == 0 {
			for {
				r, ok := readReq(fr)
				if !ok {
					return
				}
				switch r.op {
				case opPing:
					_, _ = c.Write(replyZ(r.xid, 500, 0, nil))
				case opGetData:
					_, _ = c.Write(replyZ(r.xid, 100, 0, getDataBody([]byte("d"))))
					// A notification for another path, zxid 700.
					nb := appendInt32(appendInt64(appendInt32(nil, xidNotification), 700), 0)
					nb = appendString(appendInt32(appendInt32(nb, 3), 3), "/other")
					_, _ = c.Write(frameOf(nb))
					time.Sleep(50 * time.Millisecond)
					return
				}
			}
		}
		r, ok := readReq(fr)
		if !ok {
			return
		}
		if r.op == opSetWatches || r.op == opSetWatches2 {
			s.restore = int64(binary.BigEndian.Uint64(r.body))
			_, _ = c.Write(replyZ(r.xid, 900, 0, nil))
		}
		got <- s
		if n >= 3 {
			serveBasic(c, fr, 900)
			return
		}
		time.Sleep(50 * time.Millisecond) // then drop
	})
	c := rdial(t, f.addr(), Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, _, err := c.GetW(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
	for i := 1; i <= 3; i++ {
		select {
		case s := <-got:
			t.Logf("connection %d: connect lastZxid %d, setWatches relativeZxid %d", i, s.connect, s.restore)
			if s.connect != 100 || s.restore != 100 {
				t.Fatalf("connection %d carried connect zxid %d, restore zxid %d; want 100 (the getData reply's)", i, s.connect, s.restore)
			}
		case <-ctx.Done():
			t.Fatal("no reconnection")
		}
	}
}

// Claim: on reconnecting, the client sets every watch again "in the first
// packets of the new connection, after the credentials and before any
// queued request", and each request is answered once. Attack: 40
// requests are queued from 40 goroutines while no server accepts; the
// next connection must carry auth, then setWatches, then the 40 getData,
// and each caller gets exactly one answer: its own (the data is its
// xid).
func TestReview_QueuedRequestsAfterRestore(t *testing.T) {
	var gate atomic.Bool // the test opens it once the requests are queued
	order := make(chan []int32, 1)
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		if n > 0 && !gate.Load() {
			return // refused: no connect response
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		var ops []int32
		for {
			r, ok := readReq(fr)
			if !ok {
				return
			}
			body := []byte(nil)
			if r.op == opGetData {
				body = getDataBody(binary.BigEndian.AppendUint32(nil, uint32(r.xid)))
			}
			if r.op != opPing {
				ops = append(ops, r.op)
			}
			_, _ = c.Write(replyZ(r.xid, 5, 0, body))
			if n == 0 && r.op == opGetData {
				time.Sleep(20 * time.Millisecond)
				return // drop after the watch is set
			}
			if n > 0 && len(ops) == 42 {
				order <- ops
			}
		}
	})
	c := rdial(t, f.addr(), Config{Credentials: []Credential{{Scheme: "digest", Auth: []byte("u:p")}}})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	if _, _, _, err := c.GetW(ctx, "/w"); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for InFlight(c) > 0 && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	time.Sleep(100 * time.Millisecond) // the connection is lost
	const n = 40
	type answer struct {
		data []byte
		err  error
	}
	answers := make(chan answer, 2*n)
	var wg sync.WaitGroup
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, _, err := c.Get(ctx, "/q")
			answers <- answer{d, err}
		}()
	}
	for QueueLen(c) < n && ctx.Err() == nil {
		time.Sleep(5 * time.Millisecond)
	}
	gate.Store(true)
	wg.Wait()
	close(answers)
	seenXid := map[uint32]int{}
	for a := range answers {
		if a.err != nil || len(a.data) != 4 {
			t.Fatalf("a queued get: %q %v", a.data, a.err)
		}
		seenXid[binary.BigEndian.Uint32(a.data)]++
	}
	if len(seenXid) != n {
		t.Fatalf("%d distinct answers for %d gets", len(seenXid), n)
	}
	select {
	case ops := <-order:
		t.Logf("first ops of the new connection: %v", ops[:4])
		if ops[0] != opAuth || (ops[1] != opSetWatches && ops[1] != opSetWatches2) {
			t.Fatalf("the new connection began with %v, not auth then setWatches", ops[:3])
		}
		for _, op := range ops[2:] {
			if op != opGetData {
				t.Fatalf("ops after the restore: %v", ops)
			}
		}
	case <-ctx.Done():
		t.Fatal("the server never saw the 42 requests")
	}
}

// Claim: "An event is delivered before the reply of any request that the
// server answered after it: when a request returns, every event the
// server sent before answering it is on its Watch." Attack: 200 rounds;
// the server sends the watch's event and the next request's reply in one
// write; when the request returns, the event must be on the watch.
func TestReview_EventBeforeReply(t *testing.T) {
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		for {
			r, ok := readReq(fr)
			if !ok {
				return
			}
			switch r.op {
			case opGetData:
				_, _ = c.Write(replyZ(r.xid, 5, 0, getDataBody([]byte("d"))))
			case opExists: // fire the watch set by the last getData, then answer
				out := append(notification(3, "/w"), replyZ(r.xid, 6, 0, make([]byte, 68))...)
				_, _ = c.Write(out)
			default:
				_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
			}
		}
	})
	c := rdial(t, f.addr(), Config{})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	for i := range 200 {
		_, _, w, err := c.GetW(ctx, "/w")
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := c.Exists(ctx, "/x"); err != nil {
			t.Fatal(err)
		}
		select {
		case <-w.Ready():
		default:
			t.Fatalf("round %d: the event sent before the reply was not on the watch when the request returned", i)
		}
		if ev, err := w.Next(ctx); err != nil || ev.Type != EventType(3) {
			t.Fatalf("round %d: %+v %v", i, ev, err)
		}
	}
}

// Claim (local expiry): "when no server has resumed the session for longer
// than twice its timeout since its last connection ended (a resume
// answered later is not taken ...), the client expires it locally".
// (The review wrote this against a limit of one timeout, answering at
// T0+2.4 s; the limit became twice the timeout, for the server's tick
// rounding (TestReviewBreak_LocalExpiryBeforeServerExpiry), so the answer
// comes 0.4 s past the new limit.) Attack: the session (timeout 2 s,
// limit 4 s) loses its connection at T0; attempts are refused for 0.5 s,
// then a server takes the connect request and answers it, resuming the
// session, only at T0+4.4 s (a slow handshake, within HandshakeTimeout
// 4.3 s). The client must not go on in the old session 4.4 s after its
// last connection ended without first expiring it.
func TestReviewBreak_LateResumeAfterOutageLimit(t *testing.T) {
	const timeout = 2 * time.Second
	const limit = 2 * timeout                       // outageLimit
	const lateAnswer = limit + 400*time.Millisecond // after the cut
	var t0 atomic.Int64                             // unix nanos of the cut
	var closed atomic.Bool                          // the late resume was answered with closeSession
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		cr, ok := readConnect(fr)
		if !ok {
			return
		}
		if n > 0 {
			cut := time.Unix(0, t0.Load())
			if time.Since(cut) < 500*time.Millisecond {
				return // refused
			}
			time.Sleep(time.Until(cut.Add(lateAnswer)))
		}
		sid := int64(0x77)
		if n > 0 && cr.sid == 0 {
			sid = 0x88 // a new session, when the client asks for one
		}
		if writeConnect(c, 2000, sid) != nil {
			return
		}
		if n > 0 && sid == 0x77 {
			// The late resume: the client should give the session back.
			if r, ok := readReq(fr); ok && r.op == opCloseSession {
				closed.Store(true)
			}
			return
		}
		serveBasic(c, fr, 5)
	})
	type st struct {
		s   State
		sid int64
		at  time.Time
		err error
	}
	var mu sync.Mutex
	var states []st
	c := rdial(t, f.addr(), Config{Timeout: timeout, HandshakeTimeout: lateAnswer - 100*time.Millisecond,
		OnState: func(s State, i StateInfo) {
			mu.Lock()
			states = append(states, st{s, i.SessionID, time.Now(), i.Err})
			mu.Unlock()
		}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	if _, _, err := c.Get(ctx, "/n"); err != nil {
		t.Fatal(err)
	}
	t0.Store(time.Now().UnixNano())
	f.mu.Lock()
	f.conns[0].Close()
	f.mu.Unlock()
	cut := time.Unix(0, t0.Load())
	for { // until a connection serves it
		_, _, err := c.Get(ctx, "/n")
		if err == nil {
			break
		}
		// A get queued when the session is expired locally fails with
		// ErrSessionExpired, as doc.go says.
		if !errors.Is(err, ErrConnectionLoss) && !errors.Is(err, ErrSessionExpired) {
			t.Fatal(err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	expired := false
	for _, s := range states[1:] {
		t.Logf("%v session 0x%x at T0%+v err %v", s.s, s.sid, s.at.Sub(cut).Round(time.Millisecond), s.err)
		if s.s == StateExpired {
			expired = true
			if !errors.Is(s.err, ErrExpiredLocally) || s.sid != 0x77 || s.at.Sub(cut) < limit {
				t.Fatalf("expiry of 0x%x at T0%+v, err %v: want 0x77, ErrExpiredLocally, not before the limit %v", s.sid, s.at.Sub(cut), s.err, limit)
			}
		}
		if s.s == StateConnected && s.sid == 0x77 && s.at.Sub(cut) > limit && !expired {
			t.Fatalf("the session was resumed %v after its last connection ended (timeout %v, limit %v), never expired locally", s.at.Sub(cut).Round(time.Millisecond), timeout, limit)
		}
	}
	if c.SessionID() == 0x77 {
		t.Fatalf("the client serves session 0x77, answered %v after the cut (limit %v)", lateAnswer, limit)
	}
	// The server resumed the session on the late connection: the client
	// asks it to close the session rather than leave it a timeout more.
	for wait := time.Now(); !closed.Load() && time.Since(wait) < 2*time.Second; {
		time.Sleep(5 * time.Millisecond) // polled: the fake reads it on its own goroutine
	}
	if !closed.Load() {
		t.Fatal("the late resume of 0x77 was left without a closeSession")
	}
}

// Found: the same loop as TestReviewBreak_PingThenDropReconnectLoop, from
// a connection that times out after its first reply.
//
// Claim (reconnect pacing) against a connect response that grants a
// session timeout of a few milliseconds: the read timeout (2/3 of it) and
// the pings (1/3) shrink with it. The client must not reconnect in a loop
// (at most ~8 connections in 3 s for a doubling backoff capped at 1 s,
// 20 allowed).
func TestReviewBreak_TinyGrantedTimeoutReconnectLoop(t *testing.T) {
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		ms := int32(3)
		if n == 0 {
			ms = 4000
		}
		if writeConnect(c, ms, 0x77) != nil {
			return
		}
		if n == 0 {
			r, ok := readReq(fr)
			if ok {
				_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
			}
			return
		}
		serveBasic(c, fr, 5)
	})
	c := rdial(t, f.addr(), Config{})
	_ = c
	time.Sleep(300 * time.Millisecond)
	start := f.accepted.Load()
	time.Sleep(3 * time.Second)
	n := f.accepted.Load() - start
	t.Logf("connections in 3 s to a server that grants a 3 ms session timeout: %d", n)
	if n > 20 {
		t.Fatalf("a server granting a 3 ms timeout was reconnected to %d times in 3 s", n)
	}
}

// Claim (StateAuthFailed): the server rejecting a credential is final:
// the client closes (StateClosed follows), every request fails with
// ErrAuthFailed. Attack: the credential is refused on a reconnect, in the
// middle of the restore: the auth reply is AuthFailed and the setWatches
// reply after it succeeds. Every watch must end and a request queued
// while disconnected (sent behind the restore, in the same write) fail
// with ErrAuthFailed (as the Java client's conLossPacket does in
// AUTH_FAILED), not ErrConnectionLoss, which tells the caller to retry.
func TestReviewBreak_AuthFailedMidRestore(t *testing.T) {
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		if n > 0 {
			time.Sleep(300 * time.Millisecond) // the get below is queued by then
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		for {
			r, ok := readReq(fr)
			if !ok {
				return
			}
			switch {
			case n > 0 && r.op == opAuth:
				_, _ = c.Write(replyZ(r.xid, 5, -115, nil))
			case r.op == opGetData:
				_, _ = c.Write(replyZ(r.xid, 5, 0, getDataBody([]byte("d"))))
				if n == 0 {
					time.Sleep(20 * time.Millisecond)
					return
				}
			default:
				_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
			}
		}
	})
	var mu sync.Mutex
	var states []State
	c := rdial(t, f.addr(), Config{Credentials: []Credential{{Scheme: "digest", Auth: []byte("u:p")}},
		OnState: func(s State, _ StateInfo) { mu.Lock(); states = append(states, s); mu.Unlock() }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, w, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	for ctx.Err() == nil && QueueLen(c) == 0 {
		mu.Lock()
		disc := len(states) > 1
		mu.Unlock()
		if disc {
			break
		}
		time.Sleep(5 * time.Millisecond)
	}
	_, _, err = c.Get(ctx, "/x") // queued while disconnected: sent behind the restore
	ev, werr := w.Next(ctx)
	// OnState runs on the client's own goroutine: Closed may follow the
	// watch's end by a moment (ci5 under load: states ended "auth failed").
	closed := func() bool {
		mu.Lock()
		defer mu.Unlock()
		return len(states) > 0 && states[len(states)-1] == StateClosed
	}
	for ctx.Err() == nil && !closed() {
		time.Sleep(5 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	t.Logf("get after: %v; watch: %+v %v; states %v", err, ev, werr, states)
	if !errors.Is(err, ErrAuthFailed) || ev.Type != EventNotWatching || states[len(states)-1] != StateClosed {
		t.Fatalf("credential refused mid-restore: get %v, watch %+v, states %v", err, ev, states)
	}
}

// multiResult is one MultiHeader and its record.
func multiResult(typ, code int32, rec []byte) []byte {
	return append(appendInt32(appendBool(appendInt32(nil, typ), false), code), rec...)
}

func multiDone(b []byte) []byte { return appendInt32(appendBool(appendInt32(b, -1), true), -1) }

// Claim: Multi "applies ops in one transaction: all of them, or none ...
// if the transaction failed, the error of the first op that failed", and
// "Nothing from the peer is trusted" (a short multi reply was taken as
// success once). Attack: replies with one result per op that a server
// applying the transaction never sends: every result an error result
// whose code is 0 or RuntimeInconsistency (-2), i.e. "rolled back" with
// no op that failed; a create answered with a check's result (no path). A
// multi whose ops were not applied must not return a nil error.
func TestReviewBreak_MultiAllRolledBackIsSuccess(t *testing.T) {
	for _, tc := range []struct {
		name string
		ops  []Op
		body []byte
	}{
		{"two error results, codes 0 and -2", []Op{CheckOp("/a", -1), SetOp("/b", nil, -1)},
			multiDone(append(multiResult(opError, 0, appendInt32(nil, 0)), multiResult(opError, -2, appendInt32(nil, -2))...))},
		{"one error result, code -2", []Op{CreateOp("/c", nil, ModePersistent, WorldACL(PermAll))},
			multiDone(multiResult(opError, -2, appendInt32(nil, -2)))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
				if _, ok := readConnect(fr); !ok {
					return
				}
				if writeConnect(c, 4000, 0x77) != nil {
					return
				}
				for {
					r, ok := readReq(fr)
					if !ok {
						return
					}
					body := []byte(nil)
					if r.op == opMulti {
						body = tc.body
					}
					_, _ = c.Write(replyZ(r.xid, 5, 0, body))
				}
			})
			c := rdial(t, f.addr(), Config{})
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			res, err := c.Multi(ctx, tc.ops...)
			errs := []error{}
			for _, r := range res {
				errs = append(errs, r.Err)
			}
			t.Logf("multi of %d ops: err %v, results' errors %v", len(tc.ops), err, errs)
			if err == nil {
				t.Fatalf("a multi whose every result says rolled back returned a nil error (results %v)", errs)
			}
			// doc.go: such a reply breaks the connection, and the request
			// fails with ErrConnectionLoss.
			if !errors.Is(err, ErrConnectionLoss) {
				t.Fatalf("a multi whose every result says rolled back: %v, want ErrConnectionLoss", err)
			}
		})
	}
}

// Claim: watch events go to the watches of their path. Attack: events for
// paths never watched, of unknown types, for a path watched by another
// kind, interleaved with replies: no watch gets them, OnWatch sees none,
// the connection carries on, and the one real event reaches its watch.
func TestReview_EventsForUnwatchedPaths(t *testing.T) {
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		for {
			r, ok := readReq(fr)
			if !ok {
				return
			}
			switch r.op {
			case opGetData:
				_, _ = c.Write(replyZ(r.xid, 5, 0, getDataBody([]byte("d"))))
			case opExists:
				var out []byte
				out = append(out, notification(3, "/never")...)
				out = append(out, notification(99, "/w")...)  // unknown type
				out = append(out, notification(4, "/w")...)   // children changed: /w has a data watch only
				out = append(out, notification(3, "")...)     // empty path
				out = append(out, notification(3, "/w/x")...) // below it
				out = append(out, notification(3, "/w")...)   // the real one
				out = append(out, replyZ(r.xid, 6, 0, make([]byte, 68))...)
				_, _ = c.Write(out)
			default:
				_, _ = c.Write(replyZ(r.xid, 5, 0, nil))
			}
		}
	})
	var mu sync.Mutex
	var seen []Event
	c := rdial(t, f.addr(), Config{OnWatch: func(ev Event) { mu.Lock(); seen = append(seen, ev); mu.Unlock() }})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, w, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := c.Exists(ctx, "/x"); err != nil {
		t.Fatal(err)
	}
	ev, err := w.Next(ctx)
	mu.Lock()
	defer mu.Unlock()
	t.Logf("watch got %+v %v; OnWatch saw %d events: %+v; connections %d", ev, err, len(seen), seen, f.accepted.Load())
	if err != nil || ev.Type != EventType(3) || ev.Path != "/w" || len(seen) != 1 || f.accepted.Load() != 1 {
		t.Fatalf("events for unwatched paths: watch %+v, OnWatch %+v, %d connections", ev, seen, f.accepted.Load())
	}
}

// Claim (local expiry): "the client expires it locally ... (StateExpired
// with ErrExpiredLocally, queued requests fail with ErrSessionExpired,
// every watch ends), forgets its last zxid, and starts a new session".
// Attack: a session (timeout 2 s) with a watch and a last zxid of 100 is
// cut off; every server refuses it (closes on the connect request) until
// the session is given up. Nothing may act on the old session afterwards:
// the next connect request asks for session 0 with last zxid 0 and no
// password, and no setWatches follows it.
func TestReview_LocalExpiryEndsEverything(t *testing.T) {
	type attempt struct {
		cr  connectReq
		ops []int32
	}
	var mu sync.Mutex
	var after []attempt
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		cr, ok := readConnect(fr)
		if !ok {
			return
		}
		if n > 0 && cr.sid != 0 {
			return // "client has seen zxid ...": refused
		}
		sid := int64(0x77)
		if n > 0 {
			sid = 0x88
		}
		if writeConnect(c, 2000, sid) != nil {
			return
		}
		var ops []int32
		recorded := false
		// A connection of the new session is recorded before the reply
		// to its get: the test reads after once that get has returned.
		record := func() {
			if n > 0 && !recorded {
				recorded = true
				mu.Lock()
				after = append(after, attempt{cr, ops})
				mu.Unlock()
			}
		}
		for {
			r, ok := readReq(fr)
			if !ok {
				break
			}
			ops = append(ops, r.op)
			body := []byte(nil)
			if r.op == opGetData {
				body = getDataBody([]byte("d"))
				record()
			}
			_, _ = c.Write(replyZ(r.xid, 100, 0, body))
			if n == 0 && r.op == opGetData {
				time.Sleep(20 * time.Millisecond)
				break
			}
			if n > 0 && r.op == opGetData {
				break
			}
		}
		record()
	})
	var expiredAt time.Time
	var expErr error
	c := rdial(t, f.addr(), Config{Timeout: 2 * time.Second, OnState: func(s State, i StateInfo) {
		if s == StateExpired {
			mu.Lock()
			expiredAt, expErr = time.Now(), i.Err
			mu.Unlock()
		}
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 15*time.Second)
	defer cancel()
	_, _, w, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	cut := time.Now()
	for c.Timeout() > 0 && InFlight(c) == 0 && QueueLen(c) == 0 && time.Since(cut) < 200*time.Millisecond {
		time.Sleep(5 * time.Millisecond) // the connection drops 20 ms after the reply
	}
	time.Sleep(100 * time.Millisecond)
	getErr := make(chan error, 1)
	go func() { _, _, err := c.Get(ctx, "/q"); getErr <- err }() // queued in the outage
	ev, werr := w.Next(ctx)
	gerr := <-getErr
	// A request after the expiry runs in the new session.
	d, _, err2 := c.Get(ctx, "/after")
	mu.Lock()
	defer mu.Unlock()
	t.Logf("expired locally %v after the cut (%v); watch %+v %v; queued get %v; get after %q %v; new session's connections %+v",
		expiredAt.Sub(cut).Round(time.Millisecond), expErr, ev, werr, gerr, d, err2, after)
	if !errors.Is(expErr, ErrExpiredLocally) || ev.Type != EventNotWatching || !errors.Is(ev.Err, ErrSessionExpired) ||
		!errors.Is(gerr, ErrSessionExpired) || err2 != nil || len(after) == 0 {
		t.Fatal("local expiry did not end the session as claimed")
	}
	for _, a := range after {
		if a.cr.sid != 0 || a.cr.lastZxid != 0 {
			t.Fatalf("a connect after the local expiry asked for session 0x%x with last zxid %d", a.cr.sid, a.cr.lastZxid)
		}
		for _, op := range a.ops {
			if op == opSetWatches || op == opSetWatches2 {
				t.Fatalf("the old session's watches were restored into the new session: %v", a.ops)
			}
		}
	}
}
