package session

import (
	"context"
	"log/slog"
	"math"
	"net"
	"time"

	"github.com/zklock/zklock/internal/client"
)

// A reconnect re-arms the session at the leader with the timeout the
// server it reached grants: that server's [minSessionTimeout,
// maxSessionTimeout] clamps the requested timeout, and a follower hands the
// clamped timeout to the leader when it revalidates the session, before it
// answers. The leader's expiry for the session moves earlier as well as
// later (ExpiryQueue.update). A connect response that arrives says what was
// granted (Conn.negotiated keeps the lowest); one that is lost says
// nothing, yet the server may have performed the connect. So before each
// connect the session asks the server its bounds (dialServer), and until
// the response arrives, or for good if it never does, the deadline is at
// most the connect's send time plus the lowest timeout that server may
// grant: a rearm. With the server's bounds unknown ('conf' refused) the
// lowest it may grant is unknown too, and the rearm ends the epoch at once.
//
// A rearm stops mattering once the anchor is lag past its send time: a
// server performs a connect within lag of its sending or not at all (a
// follower revalidates with its leader on the link a cut-off follower keeps
// for syncLimit×tickTime at most), so the touch behind such an anchor came
// after the rearm's, and used the timeout of a connection whose response
// arrived.
type rearm struct {
	addr    string
	sent    int64         // the connection was open: the connect request follows (ns since base)
	grant   time.Duration // the lowest timeout the server may grant; 0 if unknown
	pending bool          // the connect's response may still arrive
}

const noRearm = math.MaxInt64

// dialServer is the client's Dialer. It learns the server's facts first,
// so that the connect that follows is accounted for (see rearm), then
// dials through Config.Dialer.
func (c *Conn) dialServer(ctx context.Context, network, addr string) (net.Conn, error) {
	c.settleRearms()
	// A server found to answer in another protocol (an HTTP server) is
	// failed at once while it still does: it would hold the attempt for a
	// handshake timeout (an HTTP server written in Go waits for a request
	// line), and it has no timing the session could rest on.
	if c.sv.Load().servers[addr].other != "" {
		if head := c.speaksHTTP(ctx, addr); head != "" {
			return nil, &client.NotZooKeeperError{Head: head}
		}
		c.learned(addr, serverFacts{}) // no longer: one that told nothing, as the survey counts it
	}
	// Half the handshake at most, so that the connect keeps time: a server
	// that does not answer in time is taken at what it last told, and
	// asked again once connected (learnRole).
	actx, cancel := context.WithTimeout(ctx, HandshakeTimeout(c.cfg.Timeout, len(c.cfg.Servers))/2)
	f, ok := c.askFacts(actx, addr, false)
	cancel()
	if ok {
		c.learned(addr, f)
	}
	if f.other != "" { // its answer now: see above
		return nil, &client.NotZooKeeperError{Head: f.other}
	}
	// A server that did not answer now (not serving while it elects a
	// leader, or slow) is taken at what it last told: its bounds change
	// only with a restart, which it would have to finish, and serve, in
	// the moment between the question and the connect.
	grant := time.Duration(0)
	if f := c.sv.Load().servers[addr]; f.confOK {
		grant = f.conf.grant(c.cfg.Timeout)
	}
	dial := c.cfg.Dialer
	if dial == nil {
		var nd net.Dialer
		dial = nd.DialContext
	}
	nc, err := dial(ctx, network, addr)
	if err != nil {
		return nil, err
	}
	c.addRearm(rearm{addr: addr, sent: c.since(time.Now()), grant: grant, pending: true})
	return nc, nil
}

// settleRearms marks the connect before this one unanswered, if its
// response never came: a new connection is dialed only once the last one
// is over.
func (c *Conn) settleRearms() {
	c.rearmMu.Lock()
	defer c.rearmMu.Unlock()
	for i := range c.rearms {
		c.rearms[i].pending = false
	}
}

// addRearm records a connect about to be sent, and wakes the watchdog when
// it brings the deadline forward.
func (c *Conn) addRearm(r rearm) {
	c.rearmMu.Lock()
	c.rearms = append(c.rearms, r)
	before := c.rearmEnd.Load()
	c.updateRearmEndLocked()
	earlier := c.rearmEnd.Load() < before
	c.rearmMu.Unlock()
	if earlier && c.live.Load() != nil && time.Until(c.OwnershipDeadline()) <= 0 {
		why := "its maxSessionTimeout"
		if r.grant == 0 {
			why = "unknown: it does not answer 'conf'"
		}
		c.logs.add(slog.LevelWarn, "zklock: a reconnect may re-arm the session with a shorter timeout than the deadline allows",
			"server", r.addr, "lowest grant", r.grant, "bound", why)
	}
	if earlier {
		select {
		case c.wake <- struct{}{}:
		default:
		}
	}
}

// answered drops the pending rearm of addr: its response arrived, and
// negotiated took what it granted.
func (c *Conn) answered(addr string) {
	c.rearmMu.Lock()
	defer c.rearmMu.Unlock()
	if n := len(c.rearms); n > 0 && c.rearms[n-1].pending && c.rearms[n-1].addr == addr {
		c.rearms = c.rearms[:n-1]
		c.updateRearmEndLocked()
	}
}

// clearRearms forgets every rearm: a new session began, and the old one's
// do not bear on it.
func (c *Conn) clearRearms() {
	c.rearmMu.Lock()
	defer c.rearmMu.Unlock()
	c.rearms = nil
	c.updateRearmEndLocked()
}

// supersedeRearms drops the rearms the anchor has passed by lag.
func (c *Conn) supersedeRearms(anchor int64) {
	if c.rearmEnd.Load() == noRearm {
		return
	}
	lag := int64(c.sv.Load().timing.lag())
	c.rearmMu.Lock()
	defer c.rearmMu.Unlock()
	kept := c.rearms[:0]
	for _, r := range c.rearms {
		if r.sent+lag > anchor {
			kept = append(kept, r)
		}
	}
	clear(c.rearms[len(kept):])
	c.rearms = kept
	c.updateRearmEndLocked()
}

func (c *Conn) updateRearmEndLocked() {
	end := int64(noRearm)
	for _, r := range c.rearms {
		end = min(end, r.sent+int64(r.grant))
	}
	c.rearmEnd.Store(end)
}
