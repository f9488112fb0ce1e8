package session

import (
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// after returns a channel that closes after d: a scripted delay.
func after(d time.Duration) <-chan struct{} {
	ch := make(chan struct{})
	time.AfterFunc(d, func() { close(ch) })
	return ch
}

// latency is a hook that answers every request d after it arrived, d
// read at each request: the network's delay, both ways, as the server
// sees it.
func latency(d *atomic.Int64) func(*seenReq) (<-chan struct{}, step) {
	return func(r *seenReq) (<-chan struct{}, step) {
		return after(time.Until(r.recv.Add(time.Duration(d.Load())))), answer
	}
}

// silence makes srv answer nothing, requests nor connects, until the
// returned release is called (at the latest when the test ends).
func silence(t *testing.T, srv *zkServer) (release func()) {
	ch := make(chan struct{})
	var once sync.Once
	release = func() {
		once.Do(func() {
			srv.script(func(s *zkServer) { s.hook, s.holdCn = nil, nil })
			close(ch)
		})
	}
	srv.script(func(s *zkServer) {
		s.hook = gateAll(ch)
		s.holdCn = func(int64) <-chan struct{} { return ch }
	})
	t.Cleanup(release)
	return release
}

// lastProof returns the latest arrival, at the servers, of a request or
// connect that was answered: no reply can prove the leader's clock later
// than that. If srv is not nil, only srv's count. e.mu is held.
func (e *ensemble) lastProofLocked(srv *zkServer) time.Time {
	var last time.Time
	for _, r := range e.reqs {
		if !r.answered.IsZero() && r.recv.After(last) && (srv == nil || r.srv == srv) {
			last = r.recv
		}
	}
	for _, cn := range e.connects {
		if cn.granted != 0 && cn.recv.After(last) && (srv == nil || cn.srv == srv) {
			last = cn.recv
		}
	}
	return last
}

// readsOfLocked returns the getData requests for p. e.mu is held.
func (e *ensemble) readsOfLocked(p string) []seenReq {
	var rs []seenReq
	for _, r := range e.seenLocked(opGetData) {
		if r.path == p {
			rs = append(rs, r)
		}
	}
	return rs
}

// A reply from a standalone server, delayed 300ms, moves the deadline to
// its request's send time plus the timeout less the margin: not to when
// the reply arrived.
func TestScriptedDirectReplyAnchorsAtSend(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, _ := dialScripted(t, srv)
	ctx := t.Context()
	require.NoError(t, c.CreateContainer(ctx, "/d"))
	awaitDirect(t, c)
	const delay = 300 * time.Millisecond
	srv.script(func(s *zkServer) {
		s.hook = func(r *seenReq) (<-chan struct{}, step) {
			if r.op == opGetData && r.path == "/d" {
				return after(delay), answer
			}
			return nil, answer
		}
	})
	before := time.Now()
	_, _, err := c.Get(ctx, "/d")
	require.NoError(t, err)
	anchor := anchorAt(c)
	e.mu.Lock()
	last := e.lastProofLocked(nil)
	e.mu.Unlock()
	require.False(t, anchor.Before(before), "the reply did not move the anchor to its request's send time")
	require.False(t, anchor.After(last), "the anchor is %v past the last request the server received", anchor.Sub(last))
	got := e.seen(opGetData)
	slow := got[len(got)-1]
	require.GreaterOrEqual(t, slow.answered.Sub(slow.recv), delay)
	m := c.margin(c.Timeout())
	require.Equal(t, anchor.Add(scriptedTimeout-m), c.OwnershipDeadline())
}

// On a follower's connection (lag 1.1s), with every reply delayed 50ms,
// the anchor moves forward, but never to less than the lag before the
// latest request the follower received: a follower cut off from its
// leader may have answered that long without the leader hearing.
func TestScriptedFollowerReplyTrailsByLag(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("follower", confQuorum)
	var delay atomic.Int64
	delay.Store(int64(50 * time.Millisecond))
	srv.script(func(s *zkServer) { s.hook = latency(&delay) })
	c, _ := dialScripted(t, srv)
	e.mu.Lock()
	connected := e.connects[0].recv
	e.mu.Unlock()
	var bad []string
	e.await(t, "the anchor to pass the connect by 500ms", func() bool {
		a := anchorAt(c)
		if a.After(connected) { // beyond the connect's own proof: a follower's reply's
			if over := a.Add(quorumLag).Sub(e.lastProofLocked(nil)); over > 0 {
				bad = append(bad, over.String())
			}
		}
		return a.Sub(connected) >= 500*time.Millisecond
	})
	require.Empty(t, bad, "the anchor came closer than the lag to the follower's latest request by")
	require.True(t, c.cur.Load().lagging(), "a follower's connection counted as direct")
}

// With no replies at all, Ownership closes at the deadline (never before,
// and less than a quarter of the margin after), which is the send time of the last
// request answered plus the timeout less the margin, on the monotonic
// clock: before the server could expire the session.
func TestScriptedSilenceEndsOwnership(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("standalone", confStandalone)
	c, sts := dialScripted(t, srv)
	awaitDirect(t, c)
	own := c.Ownership()
	silence(t, srv)
	var closed time.Time
	select {
	case <-own:
		closed = time.Now()
	case <-time.After(scriptedTimeout + 5*time.Second):
		t.Fatal("Ownership open with no replies for the timeout")
	}
	dl := c.OwnershipDeadline()
	e.mu.Lock()
	last := e.lastProofLocked(nil)
	e.mu.Unlock()
	m := c.margin(c.Timeout())
	t.Logf("Ownership closed %v after the deadline; the deadline is %v after the last request answered",
		closed.Sub(dl), dl.Sub(last))
	require.False(t, closed.Before(dl), "Ownership closed %v before the deadline", dl.Sub(closed))
	// Measured: at most 4ms late with four copies of this test running
	// under -race (load average 9.5); a quarter of the margin is the bound.
	require.Less(t, closed.Sub(dl), m/4, "Ownership closed late")
	require.False(t, dl.After(last.Add(scriptedTimeout-m)), "the deadline is beyond what the last reply proves")
	require.True(t, closed.Before(last.Add(scriptedTimeout)), "Ownership closed after the server could expire the session")
	require.True(t, strings.Contains(dl.String(), " m="), "the deadline has no monotonic reading: %v", dl)
	sts.await(t, StateLost, 1)
}

// A read in flight on a direct connection (a server that says it is
// standalone: its replies prove its clock at their send time) when it is
// cut is sent again on a follower's: its reply there proves only what a
// follower's does (the lag before a later request), not its send time as
// the direct server's replies did. (A leader's replies are not direct: a
// leader may have been deposed while stopped; see evidence.go.)
func TestScriptedReplyOnFollowerAfterDirect(t *testing.T) {
	e := newEnsemble(t)
	leader := e.server("standalone", confQuorum)
	follower := e.server("follower", confQuorum)
	follower.script(func(s *zkServer) { s.refuse = true })
	c, _ := dialScripted(t, leader, follower)
	ctx := t.Context()
	require.NoError(t, c.CreateContainer(ctx, "/d"))
	require.Equal(t, leader.addr(), awaitDirect(t, c).addr)
	never := make(chan struct{})
	t.Cleanup(func() { close(never) })
	leader.script(func(s *zkServer) {
		s.hook = func(r *seenReq) (<-chan struct{}, step) {
			if r.op == opGetData && r.path == "/d" {
				return never, answer
			}
			return nil, answer
		}
	})
	read := make(chan error, 1)
	go func() { _, _, err := c.Get(ctx, "/d"); read <- err }()
	e.await(t, "the read on the leader", func() bool { return len(e.readsOfLocked("/d")) == 1 })
	leader.script(func(s *zkServer) { s.refuse = true })
	follower.script(func(s *zkServer) { s.refuse = false })
	leader.cut()
	require.NoError(t, within(t, read))
	anchor := anchorAt(c)
	e.mu.Lock()
	var reconnect time.Time
	for _, cn := range e.connects {
		if cn.srv == follower && cn.granted != 0 {
			reconnect = cn.recv
		}
	}
	proven := e.lastProofLocked(follower).Add(-quorumLag)
	e.mu.Unlock()
	e.mu.Lock()
	gets := e.readsOfLocked("/d")
	e.mu.Unlock()
	require.Len(t, gets, 2)
	require.Equal(t, follower, gets[1].srv, "the read is sent again to the follower")
	l := c.cur.Load()
	require.Equal(t, follower.addr(), l.addr)
	require.True(t, l.lagging(), "the follower's connection counted as direct")
	if proven.Before(reconnect) {
		proven = reconnect
	}
	require.False(t, anchor.After(proven),
		"the anchor is %v past what the follower's replies prove", anchor.Sub(proven))
}

// Replies late on a follower's connection that stays up (700ms each): the
// epoch ends at the deadline although nothing was lost; once replies are
// timely again and prove the session past the lag, a new epoch begins on
// the same connection, without a reconnect.
func TestScriptedLateRepliesEndAndResumeEpoch(t *testing.T) {
	e := newEnsemble(t)
	srv := e.server("follower", confQuorum)
	var delay atomic.Int64
	srv.script(func(s *zkServer) { s.hook = latency(&delay) })
	c, sts := dialScripted(t, srv)
	sid := c.SessionID()
	own := c.Ownership()
	delay.Store(int64(700 * time.Millisecond))
	select {
	case <-own:
	case <-time.After(10 * time.Second):
		t.Fatal("the epoch outlived replies that trail the deadline")
	}
	require.False(t, c.OwnershipDeadline().After(time.Now()))
	delay.Store(0)
	sts.await(t, StateReconnected, 1)
	next := c.Ownership()
	require.NotEqual(t, own, next, "a new epoch")
	select {
	case <-next:
		t.Fatal("the new epoch is over")
	default:
	}
	require.True(t, c.OwnershipDeadline().After(time.Now()))
	require.Equal(t, []transition{{StateConnected, sid}, {StateLost, sid}, {StateReconnected, sid}}, sts.list())
	e.mu.Lock()
	require.Len(t, e.connects, 1, "the client reconnected")
	e.mu.Unlock()
}
