package client_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// Claim (doc.go, "A session no server resumes"): when no server has
// resumed the session for longer than its timeout since its last
// connection ended, the client expires it locally ... "Every server that
// has been counting has expired the session by then: it heard nothing from
// the client since that connection ended."
//
// Attack ("The defaults of the real world", "Time"): a server with
// ZooKeeper's stock tickTime (2000ms, zoo_sample.cfg; the harness uses
// 100ms). A ZooKeeper server expires a session in tick-sized buckets
// (ExpiryQueue.roundToNextInterval: the next tick boundary after last
// touch + timeout), so up to one tick after its timeout. The client
// touches the session with a request, its connection is reset at once and
// every reconnection refused; at the client's StateExpired
// (ErrExpiredLocally) a second client, straight to the server, looks for
// the session's ephemeral node.
func TestReviewBreak_LocalExpiryBeforeServerExpiry(t *testing.T) {
	zk := zktest.Start(t, zktest.WithTickTime(2*time.Second), zktest.WithSessionTimeouts(4*time.Second, 40*time.Second))
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	direct, err := client.Dial(ctx, client.Config{Servers: zk.Servers(), Timeout: 20 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer direct.Close()
	open := client.WorldACL(client.PermAll)
	const rounds = 3
	alive := 0
	for i := range rounds {
		p := zktest.NewProxy(t, zk.Servers())
		expired := make(chan time.Time, 1)
		var once sync.Once
		c, err := client.Dial(ctx, client.Config{Servers: p.Addrs(), Timeout: 4 * time.Second,
			OnState: func(s client.State, info client.StateInfo) {
				if s == client.StateExpired && errors.Is(info.Err, client.ErrExpiredLocally) {
					once.Do(func() { expired <- time.Now() })
				}
			}})
		if err != nil {
			t.Fatal(err)
		}
		node := fmt.Sprintf("/rv45-e%d-%d", i, time.Now().UnixNano())
		if _, _, err := c.Create(ctx, node, nil, client.ModeEphemeral, open); err != nil {
			t.Fatal(err)
		}
		// Spread the rounds over the tick's phase.
		time.Sleep(time.Duration(i) * 700 * time.Millisecond)
		if _, _, err := c.Exists(ctx, "/"); err != nil { // the server's last touch
			t.Fatal(err)
		}
		p.Refuse(true)
		p.Reset()
		cut := time.Now()
		var at time.Time
		select {
		case at = <-expired:
		case <-ctx.Done():
			t.Fatal("no local expiry")
		}
		_, there, err := direct.Exists(ctx, node)
		checked := time.Since(at)
		gone := time.Duration(-1)
		if there {
			for time.Since(at) < 10*time.Second {
				if _, still, _ := direct.Exists(ctx, node); !still {
					gone = time.Since(at)
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
		}
		t.Logf("round %d: local expiry %v after the cut; the session's ephemeral node there %v (checked %v later, %v); it vanished %v after the local expiry",
			i, at.Sub(cut).Round(time.Millisecond), there, checked.Round(time.Millisecond), err, gone.Round(time.Millisecond))
		if there {
			alive++
		}
		c.Close()
	}
	if alive > 0 {
		t.Fatalf("in %d of %d rounds the server still held the session (its ephemeral node) when the client declared it expired locally", alive, rounds)
	}
}
