package session

import (
	"context"
	"sync"
	"time"
)

// The ownership deadline rests on the anchor: a time at or before which the
// leader, the only server that expires sessions, is proven to have
// restarted the session's clock. The leader cannot expire the session
// before anchor + timeout. This file turns what each connection sees into
// that proof (the model is in timing.go and docs/ownership.md):
//
//   - a connect response that created the session: the leader created it
//     after the connect request was sent, with a quorum, whichever server
//     answered;
//   - a connect response that revalidated the session (a reconnect): a
//     follower asks its leader, but a leader answers from its own table,
//     and a leader stopped past its followers' syncLimit, replaced
//     meanwhile, answers when it runs again as if it still led. It steps
//     down within about a tick of running again (its quorum check every
//     half tick finds no follower), closing every client connection; so
//     the revalidation counts once the connection carries a reply to a
//     request sent revalidationLag after the response arrived, or at once
//     when the server is confirmed standalone;
//   - a reply from a standalone server: its clock restarted when the
//     request arrived, after it was sent;
//   - a reply from an ensemble's server (a follower, or the leader, which
//     can be deposed without knowing it: see learnRole) to a request sent
//     at s proves the server still served then, so the requests it
//     answered at or before s - lag had reached a leader not yet replaced:
//     their send times count.
//
// A connection's server is standalone only if its 'srvr' says so and the
// connection then carries a reply to a request sent after that answer: a
// server changes role only through an election, which closes every client
// connection it has, so the answer then holds for the connection's whole
// life. Until then the connection counts as a follower's.

// sample is a reply on a follower's connection: when its request was sent
// and when the reply arrived, in nanoseconds since Conn.base.
type sample struct{ sent, answered int64 }

// link is one connection's evidence, fed by the client's hooks: OnState
// (StateConnected) for the connect, OnReply for each reply on it.
type link struct {
	c    *Conn
	addr string

	mu        sync.Mutex
	direct    bool  // replies prove the leader's clock at their send time
	confirmAt int64 // a 'srvr' said standalone at this time; 0 if not
	samples   []sample
	head      int    // samples[:head] are used up
	reval     sample // a revalidating connect response not yet proven
	revalSet  bool
}

// revalidationLag is how long after a revalidating connect response a
// request must be sent, and answered on the same connection, for the
// response to count: a deposed leader steps down within about a tick of
// running again (its quorum check runs every half tick), and closes the
// connection; two ticks leave a tick of slack.
func revalidationLag(t Timing) int64 { return int64(2 * t.Tick) }

func (c *Conn) newLink(addr string) *link { return &link{c: c, addr: addr} }

// Connected reports the connect response: the leader created the session
// after sent, or the server answering revalidated it (proven later: see
// revalidationLag).
func (l *link) Connected(sid int64, timeout time.Duration, sent time.Time) {
	c := l.c
	prev := c.connSID.Swap(sid)
	if sid == 0 {
		return
	}
	c.negotiated(sid, timeout)
	if prev == sid {
		c.answered(l.addr) // negotiated has what it granted
		l.mu.Lock()
		l.reval, l.revalSet = sample{sent: c.since(sent), answered: c.since(time.Now())}, true
		l.mu.Unlock()
	} else {
		c.clearRearms() // they were about the session before this one
		c.raiseAnchor(c.since(sent))
	}
	c.cur.Store(l)
	c.spawn(l.learnRole)
}

// provenRevalLocked returns the send time of the revalidating connect a
// request sent at s proves, or -1.
func (l *link) provenRevalLocked(s int64) int64 {
	if !l.revalSet || (!l.direct && s < l.reval.answered+revalidationLag(l.c.sv.Load().timing)) {
		return -1
	}
	l.revalSet = false
	return l.reval.sent
}

// Replied reports a reply, which arrived at at, to a request sent at sent.
func (l *link) Replied(sent, at time.Time) {
	c := l.c
	s := c.since(sent)
	if s < c.floor.Load() {
		return // sent before the process was suspended: proves nothing now
	}
	l.mu.Lock()
	if !l.direct && l.confirmAt != 0 && s >= l.confirmAt {
		l.direct, l.samples, l.head = true, nil, 0
	}
	reval := l.provenRevalLocked(s)
	if l.direct {
		l.mu.Unlock()
		c.raiseAnchor(max(s, reval))
		return
	}
	proven := max(l.prove(s, c.since(at), int64(c.sv.Load().timing.lag())), reval)
	l.mu.Unlock()
	if proven >= 0 {
		c.raiseAnchor(proven)
	}
}

// prove records a follower's reply (sent s, answered a) and returns the
// latest send time it proves reached the leader, or -1. Samples are kept
// no closer than a 64th of lag to each other: dropping one can only make
// the anchor earlier, never later.
func (l *link) prove(s, a, lag int64) int64 {
	proven := int64(-1)
	for l.head < len(l.samples) && l.samples[l.head].answered <= s-lag {
		proven = l.samples[l.head].sent
		l.head++
	}
	if n := len(l.samples); n == l.head || l.samples[n-1].answered <= a-lag/64 {
		l.samples = append(l.samples, sample{s, a})
	}
	if l.head > 32 && l.head*2 > len(l.samples) {
		l.samples = append(l.samples[:0], l.samples[l.head:]...)
		l.head = 0
	}
	return proven
}

// learnRole asks the connection's server for its mode. A standalone
// server is confirmed by the next reply to a request sent after
// the answer; one such request is sent here, so that confirmation does not
// wait for the client's next ping.
func (l *link) learnRole() {
	c := l.c
	// The server is asked again now that the session reached it: it may
	// have restarted with another configuration since dialServer asked.
	f, ok := c.askFacts(c.bg, l.addr, true)
	if ok {
		c.learned(l.addr, f)
	}
	// A leader's replies trail like a follower's: a leader can be deposed
	// without knowing it (paused past its followers' syncLimit, it runs
	// again still leading in its own eyes and answers what was sent
	// meanwhile, after a new leader restarted every session's clock), and
	// the 'srvr' goes on a connection of its own, which a balancer in front
	// of the servers may send to another server than the session's. Only a
	// standalone server, the one server there is, has neither.
	if !ok || f.mode != "standalone" {
		return // an ensemble's server, or unknown: its replies keep trailing
	}
	l.mu.Lock()
	l.confirmAt = c.since(time.Now())
	l.mu.Unlock()
	if c.cur.Load() == l {
		ctx, cancel := context.WithTimeout(c.bg, time.Duration(c.timeout.Load()))
		defer cancel()
		c.touch(ctx)
	}
}

// lagging reports whether the connection's replies trail the leader's
// clock, so that the session must keep them frequent.
func (l *link) lagging() bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	return !l.direct
}

// since converts t to nanoseconds since c.base.
func (c *Conn) since(t time.Time) int64 { return int64(t.Sub(c.base)) }

// raiseAnchor moves the anchor forward to t, never back.
func (c *Conn) raiseAnchor(t int64) {
	for {
		old := c.anchor.Load()
		if t <= old || t < c.floor.Load() {
			return
		}
		if c.anchor.CompareAndSwap(old, t) {
			// A resume from suspend may have set the floor (and the anchor
			// back) since it was read: evidence from before it must not stand.
			if f := c.floor.Load(); t < f {
				c.anchor.CompareAndSwap(t, f-c.timeout.Load())
			}
			c.supersedeRearms(t)
			return
		}
	}
}

// negotiated records the timeout a server granted the session. The leader
// may restart the session's clock with any timeout the session was ever
// granted (a new leader uses the one it was created with; a revalidation
// the granting server's), and with the lowest a known server would grant
// after a connect whose response was lost: the deadline uses the lowest.
func (c *Conn) negotiated(sid int64, timeout time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := timeout
	if sid == c.timeoutSID {
		t = min(t, time.Duration(c.timeout.Load()))
	}
	if f := c.sv.Load().floor; f > 0 {
		t = min(t, f)
	}
	c.timeoutSID = sid
	c.timeout.Store(int64(t))
}
