package client

import (
	"context"
	"errors"
	"net"
	"sync"
	"testing"
	"time"
)

// TestResumeAsOtherSessionRestoresNothing: a resume of session 0x77 that
// the server answers with session 0x99 ends 0x77 for the client as an
// expiry does: StateExpired for 0x77 (Err wrapping ErrSessionExpired)
// before StateConnected for 0x99, the request queued while disconnected
// fails with ErrSessionExpired, the watch ends with ErrSessionExpired, no
// setWatches reaches the new session's connection, and a request made
// afterwards runs in the new session.
func TestResumeAsOtherSessionRestoresNothing(t *testing.T) {
	release := make(chan struct{})
	var mu sync.Mutex
	var ops []int32 // every request read on the connections after the first
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		if _, ok := readConnect(fr); !ok {
			return
		}
		sid := int64(0x77)
		if n > 0 {
			select { // until the test has queued its request
			case <-release:
			case <-time.After(5 * time.Second):
				return
			}
			sid = 0x99
		}
		if writeConnect(c, 4000, sid) != nil {
			return
		}
		for {
			r, ok := readReq(fr)
			if !ok {
				return
			}
			if n > 0 {
				mu.Lock()
				ops = append(ops, r.op)
				mu.Unlock()
			}
			body := []byte(nil)
			if r.op == opGetData {
				body = getDataBody([]byte("d"))
			}
			if _, err := c.Write(replyZ(r.xid, 5, 0, body)); err != nil {
				return
			}
		}
	})
	type st struct {
		s   State
		sid int64
		err error
	}
	var smu sync.Mutex
	var states []st
	c := rdial(t, f.addr(), Config{OnState: func(s State, i StateInfo) {
		smu.Lock()
		states = append(states, st{s, i.SessionID, i.Err})
		smu.Unlock()
	}})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, _, w, err := c.GetW(ctx, "/w")
	if err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	f.conns[0].Close()
	f.mu.Unlock()
	disconnected := func() bool {
		smu.Lock()
		defer smu.Unlock()
		return len(states) > 1
	}
	for !disconnected() && ctx.Err() == nil {
		time.Sleep(time.Millisecond) // polled: the client sees the close on its own
	}
	queued := make(chan error, 1)
	go func() { _, _, err := c.Get(ctx, "/q"); queued <- err }()
	for QueueLen(c) == 0 && ctx.Err() == nil {
		time.Sleep(time.Millisecond) // polled: the get is queued by another goroutine
	}
	close(release)
	qerr := <-queued
	ev, werr := w.Next(ctx)
	if _, _, err := c.Get(ctx, "/after"); err != nil {
		smu.Lock()
		defer smu.Unlock()
		t.Fatalf("get in the new session: %v (queued get %v, watch %+v %v, states %+v)", err, qerr, ev, werr, states)
	}
	mu.Lock()
	seen := append([]int32(nil), ops...)
	mu.Unlock()
	smu.Lock()
	got := append([]st(nil), states...)
	smu.Unlock()
	t.Logf("queued get: %v; watch: %+v %v; ops on the new session's connection %v; states %+v", qerr, ev, werr, seen, got)
	if !errors.Is(qerr, ErrSessionExpired) {
		t.Fatalf("request queued for session 0x77: %v, want ErrSessionExpired", qerr)
	}
	if werr != nil || ev.Type != EventNotWatching || !errors.Is(ev.Err, ErrSessionExpired) {
		t.Fatalf("watch of session 0x77: %+v %v", ev, werr)
	}
	for _, op := range seen {
		if op == opSetWatches || op == opSetWatches2 {
			t.Fatalf("a watch of session 0x77 was restored into 0x99: ops %v", seen)
		}
	}
	expiredAt, connectedAt := -1, -1
	for i, s := range got {
		if s.s == StateExpired && s.sid == 0x77 && errors.Is(s.err, ErrSessionExpired) && expiredAt < 0 {
			expiredAt = i
		}
		if s.s == StateConnected && s.sid == 0x99 && connectedAt < 0 {
			connectedAt = i
		}
	}
	if expiredAt < 0 || connectedAt < expiredAt || c.SessionID() != 0x99 {
		t.Fatalf("states %+v, session now 0x%x: want StateExpired for 0x77 before StateConnected for 0x99", got, c.SessionID())
	}
}
