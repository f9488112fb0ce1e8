package client

import (
	"io"
	"testing"
	"time"
)

// TestAcceptThenDrop: a server that accepts the session and drops every
// connection right after is not reconnected to in a hot loop: a
// connection that carried no reply counts as a failed attempt, and the
// attempts back off.
func TestAcceptThenDrop(t *testing.T) {
	f := startFakeDropping(t, func(conn int, xid, op int32, w io.Writer) {
		_, _ = w.Write(reply(xid, 0, nil))
	}, func(int) bool { return true })
	dialFake(t, f, nil)
	before := f.accepted.Load()
	const window = 3 * time.Second
	<-time.After(window) // the measure is a rate over the window
	n := f.accepted.Load() - before
	t.Logf("%d reconnects in %v", n, window)
	if n > 20 || n < 2 {
		t.Fatalf("%d reconnects in %v to a server that drops every connection; want between 2 and 20", n, window)
	}
}

// TestAnswerOnceThenDrop: a server that answers one request on each
// connection (the ping a new connection sends) and then drops it is not
// reconnected to in a loop either: a connection that carried a reply but
// lived less than MaxReconnectDelay is a failed attempt, and the attempts
// back off as for a dead server (50ms doubling to 1s: about 8 in 3s).
func TestAnswerOnceThenDrop(t *testing.T) {
	f := startFake(t, func(conn int, xid, op int32, w io.Writer) {
		_, _ = w.Write(reply(xid, 0, nil))
		_ = w.(io.Closer).Close()
	})
	dialFake(t, f, nil)
	before := f.accepted.Load()
	const window = 3 * time.Second
	<-time.After(window) // the measure is a rate over the window
	n := f.accepted.Load() - before
	t.Logf("%d reconnects in %v", n, window)
	if n > 20 || n < 2 {
		t.Fatalf("%d reconnects in %v to a server that answers once per connection; want between 2 and 20", n, window)
	}
}
