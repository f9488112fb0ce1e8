package session

import (
	"context"
	"time"
)

// heartbeat keeps replies coming on a connection whose replies trail the
// leader's clock (a follower's, or one whose server's role is not yet
// known): the anchor can only reach a request answered lag before a later
// one was sent, so the gap between replies adds to how far the deadline
// trails. The client pings only after a third of the session timeout of
// silence; this asks every half tick. A standalone server's connection,
// whose replies prove its clock directly, gets none.
func (c *Conn) heartbeat() {
	timer := time.NewTimer(time.Hour)
	defer timer.Stop()
	for {
		sv := c.sv.Load()
		if !sv.followers {
			return // final: the servers said they are all standalone
		}
		beat := sv.timing.beat()
		timer.Reset(beat)
		select {
		case <-timer.C:
		case <-c.bg.Done():
			return
		}
		l := c.cur.Load()
		if l == nil || !l.lagging() || !c.connected.Load() {
			continue
		}
		ctx, cancel := context.WithTimeout(c.bg, 4*beat)
		c.touch(ctx)
		cancel()
	}
}

// touch sends the cheapest request there is, an exists on the root, and
// waits for its reply or ctx. Its reply is evidence like any other.
func (c *Conn) touch(ctx context.Context) {
	select {
	case <-c.clSet: // the first connection's role is learnt while Dial waits
	case <-ctx.Done():
		return
	}
	if c.cl != nil {
		_, _, _ = c.cl.Exists(ctx, "/")
	}
}
