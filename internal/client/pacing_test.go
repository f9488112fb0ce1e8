package client

import (
	"context"
	"net"
	"sync"
	"testing"
	"time"
)

// TestHealthyDropReconnectsQuickly: a connection that carried replies and
// lived at least MaxReconnectDelay proved useful: when it drops, the next
// attempt comes within a random part of 50ms, every time (the session's
// holds depend on how soon the client is back). Were such a connection
// taken for a failed attempt, the pauses would double up to
// MaxReconnectDelay (300ms here): 25-50ms, 50-100ms, 100-200ms, then
// 150-300ms.
func TestHealthyDropReconnectsQuickly(t *testing.T) {
	const maxDelay = 300 * time.Millisecond
	var mu sync.Mutex
	var accepts []time.Time
	f := startRFake(t, func(n int, c net.Conn, fr *frameReader) {
		mu.Lock()
		accepts = append(accepts, time.Now())
		mu.Unlock()
		if _, ok := readConnect(fr); !ok {
			return
		}
		if writeConnect(c, 4000, 0x77) != nil {
			return
		}
		serveBasic(c, fr, 5)
	})
	c := rdial(t, f.addr(), Config{MaxReconnectDelay: maxDelay})
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	const drops = 5
	var worst time.Duration
	for i := range drops {
		if _, _, err := c.Get(ctx, "/n"); err != nil { // the connection carried a reply
			t.Fatalf("drop %d: %v", i, err)
		}
		mu.Lock()
		since := accepts[len(accepts)-1]
		mu.Unlock()
		// The connection must live MaxReconnectDelay to prove useful: the
		// wait is for time itself to pass.
		time.Sleep(time.Until(since.Add(maxDelay + 50*time.Millisecond)))
		f.mu.Lock()
		f.conns[len(f.conns)-1].Close()
		f.mu.Unlock()
		cut := time.Now()
		for f.accepted.Load() < int32(i+2) && ctx.Err() == nil {
			time.Sleep(time.Millisecond) // polled: the client reconnects on its own
		}
		took := time.Since(cut)
		worst = max(worst, took)
		t.Logf("drop %d: reconnected in %v", i, took.Round(time.Millisecond))
	}
	// Pacing after a useful connection: at most 50ms, plus the loopback
	// connect and this slow machine's scheduling; the doubling backoff
	// would wait 150-300ms at the last drops.
	if worst > 150*time.Millisecond {
		t.Fatalf("a connection that served for %v was followed by a reconnect after %v (want within ~50ms)", maxDelay, worst)
	}
}
