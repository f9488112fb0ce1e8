package zktest

import (
	"context"
	"errors"
)

// ExpireSession makes the server expire session sessionID for real, the way
// a long partition does: it blackholes p (through which the session's client
// must be connected, and only that client), waits until the leader's 'dump'
// no longer lists the session (Cluster.WaitSessionExpired, bounded by
// Cluster.ExpiryBound), then heals p. On healing, the client reconnects and
// is told its session has expired (zklock: StateExpired), and the
// session's ephemeral nodes are gone.
//
// The 'dump' of ZooKeeper 3.8 lists every live session on the leader,
// whether or not it owns ephemeral nodes. Where 'dump' is not available (an
// external server whose whitelist lacks it), ExpireSession instead waits
// MaxSessionTimeout plus two ticks, by which time the server has expired any
// silent session.
//
// p is healed on every return, which also clears its latency and refusal.
// On ctx's end it returns an error for which errors.Is(err, ctx.Err()) holds.
func ExpireSession(ctx context.Context, c *Cluster, p *Proxy, sessionID int64) error {
	p.Blackhole()
	defer p.Heal()
	err := c.WaitSessionExpired(ctx, sessionID)
	if errors.Is(err, ErrNoSessionDump) {
		return sleepCtx(ctx, c.MaxSessionTimeout()+2*c.TickTime())
	}
	return err
}
