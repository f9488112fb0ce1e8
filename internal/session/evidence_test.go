package session

import (
	"context"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// newEvidenceConn is a Conn with only what the deadline needs: no server.
// Its survey says followers serve for 1s after losing their leader (tick
// 100ms, syncLimit 10: lag 1.1s) and its timeout is 4s.
func newEvidenceConn(t *testing.T) *Conn {
	c := &Conn{log: slog.New(slog.DiscardHandler), base: time.Now(), changed: make(chan struct{}),
		done: make(chan struct{}), surveyed: make(chan struct{}),
		cfg: Config{Dialer: (&net.Dialer{}).DialContext, Timeout: 4 * time.Second}}
	c.bg, c.stopBg = context.WithCancel(context.Background())
	t.Cleanup(func() { c.stopBg(); c.bgWG.Wait() }) // learnRole, which finds no server
	c.sv.Store(&survey{timing: Timing{Tick: 100 * time.Millisecond, SyncLimit: 10}, followers: true, source: SourceConf})
	c.timeout.Store(int64(4 * time.Second))
	c.rearmEnd.Store(noRearm)
	return c
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }

// at is the instant n ms after c.base.
func at(c *Conn, n int) time.Time { return c.base.Add(ms(n)) }

// A follower's reply proves only the requests it answered at least lag
// (1.1s) before a later request was sent: the issue 32 scenario, where a
// follower cut off from its leader goes on answering.
func TestFollowerRepliesTrailByLag(t *testing.T) {
	c := newEvidenceConn(t)
	l := c.newLink("f:1")
	l.Connected(0x10, 4*time.Second, at(c, 0)) // the leader revalidated the session after 0
	require.Equal(t, int64(0), c.anchor.Load())
	// Pings every 50ms, answered within 2ms, for 3s: the follower was cut
	// from its leader at some point the client cannot see.
	for s := 50; s <= 3000; s += 50 {
		l.Replied(at(c, s), at(c, s+2))
		proven := time.Duration(c.anchor.Load())
		// The anchor never passes a request answered less than lag before
		// the latest request's send (0 is the connect's own proof).
		if proven > 0 {
			require.LessOrEqual(t, proven+ms(2), ms(s)-ms(1100), "after the reply to the request sent at %dms", s)
		}
		if s >= 1200 { // and trails by no more than lag, a sample's spacing and a ping
			require.GreaterOrEqual(t, proven, ms(s)-ms(1100)-ms(50)-ms(1100/64)-ms(2))
		}
	}
}

// A leader's or a standalone server's replies count at their send time,
// once a reply to a request sent after its 'srvr' answer confirms the
// connection is still the one that answer was about.
func TestDirectRepliesNeedConfirmation(t *testing.T) {
	c := newEvidenceConn(t)
	l := c.newLink("l:1")
	l.Connected(0x10, 4*time.Second, at(c, 0))
	l.mu.Lock()
	l.confirmAt = int64(ms(500))
	l.mu.Unlock()
	l.Replied(at(c, 400), at(c, 450)) // sent before the answer: not confirmed
	require.Equal(t, int64(0), c.anchor.Load())
	require.True(t, l.lagging())
	l.Replied(at(c, 600), at(c, 610))
	require.Equal(t, int64(ms(600)), c.anchor.Load())
	require.False(t, l.lagging())
	l.Replied(at(c, 700), at(c, 701))
	require.Equal(t, int64(ms(700)), c.anchor.Load())
}

// The deadline uses the lowest timeout the session was ever granted: a new
// leader re-arms a session with the timeout it was created with.
func TestTimeoutIsTheLowestGranted(t *testing.T) {
	c := newEvidenceConn(t)
	c.negotiated(0x10, 4*time.Second)
	c.negotiated(0x10, 6*time.Second) // a reconnect to a server granting more
	require.Equal(t, 4*time.Second, c.Timeout())
	c.negotiated(0x10, 3*time.Second)
	require.Equal(t, 3*time.Second, c.Timeout())
	c.negotiated(0x20, 5*time.Second) // a new session starts over
	require.Equal(t, 5*time.Second, c.Timeout())
	c.sv.Store(&survey{followers: true, floor: 2 * time.Second}) // a known server would grant 2s
	c.negotiated(0x20, 5*time.Second)
	require.Equal(t, 2*time.Second, c.Timeout())
}

// A resume from suspend ends the epoch at once, and replies to requests
// sent before it prove nothing.
func TestResumeFromSuspendEndsEpoch(t *testing.T) {
	c := newEvidenceConn(t)
	var slept int64
	suspendedClock = func() int64 { return slept }
	t.Cleanup(func() { suspendedClock = suspendedTotal })
	l := c.newLink("l:1")
	l.Connected(0x10, 4*time.Second, time.Now())
	c.mu.Lock()
	c.newEpochLocked()
	ep := c.ep
	c.mu.Unlock()
	before := time.Now()
	c.CheckDeadline()
	require.NotNil(t, c.ep, "no suspend, deadline ahead: the epoch goes on")

	slept = int64(time.Hour) // the machine slept an hour; the monotonic clock did not count it
	c.CheckDeadline()
	select {
	case <-ep.done:
	default:
		t.Fatal("the epoch outlived a resume from suspend")
	}
	require.True(t, c.OwnershipDeadline().Before(time.Now()), "the deadline must be past after a resume")
	l.mu.Lock()
	l.direct = true
	l.mu.Unlock()
	l.Replied(before, time.Now()) // sent before the suspend was seen
	require.True(t, c.OwnershipDeadline().Before(time.Now()), "a reply to a request sent before the resume counted")
	l.Replied(time.Now(), time.Now())
	require.True(t, c.OwnershipDeadline().After(time.Now()), "a reply to a later request proves the session again")
}

// fourLetterServer answers each four-letter word with answers[cmd], as a
// ZooKeeper server's client port does, until the test ends.
func fourLetterServer(t *testing.T, answers map[string]string) string {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { ln.Close() })
	go func() {
		for {
			nc, err := ln.Accept()
			if err != nil {
				return
			}
			buf := make([]byte, 4)
			if _, err := nc.Read(buf); err == nil {
				fmt.Fprint(nc, answers[string(buf)])
			}
			nc.Close()
		}
	}()
	return ln.Addr().String()
}

// The survey takes the most cautious timing among the servers and the
// lowest session timeout any of them would grant; a server that answers
// 'srvr' but refuses 'conf' leaves the timing unknown unless the caller
// stated it; a server that answers nothing is taken to be like those that
// told.
func TestSurveyServers(t *testing.T) {
	conf := func(tick, syncLimit, min, max int) string { return confAnswer(tick, syncLimit, min, max) }
	a := fourLetterServer(t, map[string]string{"conf": conf(100, 15, 200, 20000), "srvr": "Mode: leader\n"})
	b := fourLetterServer(t, map[string]string{"conf": conf(200, 5, 400, 3000), "srvr": "Mode: follower\n"})
	refused := fourLetterServer(t, map[string]string{
		"conf": "conf is not executed because it is not in the whitelist.\n", "srvr": "Mode: follower\n"})
	standalone := fourLetterServer(t, map[string]string{
		"conf": confAnswer(2000, -1, 4000, 40000), "srvr": "Mode: standalone\n"})
	stock := fourLetterServer(t, map[string]string{
		"conf": "conf is not executed because it is not in the whitelist.\n", "srvr": "Mode: standalone\n"})
	survey := func(timing *Timing, servers ...string) *survey {
		c := &Conn{cfg: Config{Dialer: (&net.Dialer{}).DialContext, Timeout: 10 * time.Second, Servers: servers}}
		if timing != nil {
			c.cfg.Timing, c.cfg.TimingSet = *timing, true
		}
		c.sv.Store(&survey{followers: true, source: SourceUnknown})
		c.surveyServers(t.Context())
		return c.sv.Load()
	}
	sv := survey(nil, a, b)
	require.True(t, sv.followers)
	require.Equal(t, Timing{Tick: 100 * time.Millisecond, SyncLimit: 15}, sv.timing, "a's lag, 1.6s, is b's 1.2s")
	require.Equal(t, 3*time.Second, sv.floor, "b grants at most 3s")
	require.Equal(t, SourceConf, sv.source)

	sv = survey(nil, a, refused)
	require.Equal(t, SourceUnknown, sv.source, "a server that refuses conf tells nothing")
	require.Equal(t, []string{refused}, sv.refusing)
	stated := Timing{Tick: 2 * time.Second, SyncLimit: 5}
	sv = survey(&stated, a, refused)
	require.Equal(t, SourceStated, sv.source)
	require.Equal(t, stated, sv.timing, "the stated timing, more cautious than a's")

	sv = survey(nil, standalone)
	require.False(t, sv.followers)
	require.Equal(t, 10*time.Second, sv.floor)
	require.Equal(t, SourceStandalone, sv.source)
	sv = survey(nil, stock)
	require.False(t, sv.followers, "srvr says standalone: no timing needed")
	require.Equal(t, SourceStandalone, sv.source)

	// A follower whose conf was cut before its quorum lines: shaped like a
	// standalone server's whole answer, it is not taken for one against
	// srvr's follower, nor for a's timing; it tells nothing. So is an
	// answer cut within the quorum lines.
	cutBefore := func(conf, line string) string { return conf[:strings.Index(conf, "\n"+line)+1] }
	cutMember := fourLetterServer(t, map[string]string{
		"conf": cutBefore(confAnswer(100, 50, 200, 20000), "initLimit="), "srvr": "Mode: follower\n"})
	cutLimit := fourLetterServer(t, map[string]string{
		"conf": cutBefore(confAnswer(100, 50, 200, 20000), "electionAlg="), "srvr": "Mode: follower\n"})
	for _, cut := range []string{cutMember, cutLimit} {
		sv = survey(nil, a, cut)
		require.True(t, sv.followers)
		require.Equal(t, SourceUnknown, sv.source, "a cut conf tells nothing")
		require.Equal(t, []string{cut}, sv.refusing)
	}

	sv = survey(nil, a, "127.0.0.1:1") // nothing listens: like a
	require.True(t, sv.followers)
	require.Equal(t, SourceConf, sv.source)
	require.Equal(t, Timing{Tick: 100 * time.Millisecond, SyncLimit: 15}, sv.timing)
	sv = survey(nil, "127.0.0.1:1") // nobody told
	require.Equal(t, SourceUnknown, sv.source)
	require.ErrorIs(t, (&Conn{}).unknownErr(sv), ErrTimingUnknown)
}

// timingErr refuses, with the numbers, a session too short to hold
// through a follower, and accepts one long enough; it names both fixes
// when the timing is unknown.
func TestTimingErr(t *testing.T) {
	c := newEvidenceConn(t) // lag 1.1s, beat 50ms
	c.timeout.Store(int64(1400 * time.Millisecond))
	err := c.timingErr(c.sv.Load())
	require.ErrorIs(t, err, ErrInvalid)
	for _, want := range []string{"1.4s", "10×100ms = 1s", "1.4375s"} {
		require.True(t, strings.Contains(err.Error(), want), "%q lacks %q", err, want)
	}
	c.timeout.Store(int64(1500 * time.Millisecond))
	require.NoError(t, c.timingErr(c.sv.Load()))
	require.NoError(t, c.timingErr(&survey{followers: false, source: SourceStandalone}), "standalone servers have no followers")
	err = c.timingErr(&survey{followers: true, source: SourceUnknown, refusing: []string{"h:1"}})
	require.ErrorIs(t, err, ErrTimingUnknown)
	for _, want := range []string{"[h:1]", "4lw.commands.whitelist=srvr,conf", "WithEnsembleTiming(tickTime, syncLimit)", "maxSessionTimeout"} {
		require.Contains(t, err.Error(), want)
	}
}

func TestParseConfAndMode(t *testing.T) {
	sc, ok := parseConf(confAnswer(100, 15, 200, 2000))
	require.True(t, ok)
	require.Equal(t, serverConf{tick: 100 * time.Millisecond, syncLimit: 15, minSess: 200 * time.Millisecond, maxSess: 2 * time.Second, quorum: true}, sc)
	sc, ok = parseConf(confAnswer(100, -1, 200, 2000))
	require.True(t, ok)
	require.Equal(t, serverConf{tick: 100 * time.Millisecond, minSess: 200 * time.Millisecond, maxSess: 2 * time.Second}, sc)
	// An answer cut anywhere, cleanly between lines or within one, is not
	// a member's, and a standalone server's only where a member's cut
	// cleanly before its quorum lines reads exactly like one (settleConf
	// then asks srvr); a standalone's cut within its last line may not be
	// its last. (A member's answer ends with "version=" and the
	// configuration's version, which zklock does not use: a cut within
	// that value goes unseen.)
	quorum, standalone := confAnswer(100, 15, 200, 2000), confAnswer(100, -1, 200, 2000)
	asStandalone := 0
	for i := range len(quorum) - len("0") {
		sc, ok := parseConf(quorum[:i])
		require.False(t, ok && sc.quorum, "cut at %d: %q", i, quorum[:i])
		if ok {
			asStandalone++
			require.True(t, strings.HasSuffix(quorum[:i], "serverId=1\n"), "cut at %d: %q", i, quorum[:i])
		}
	}
	require.Equal(t, 1, asStandalone, "the cut before initLimit= reads as a standalone server's answer")
	for i := range len(standalone) {
		_, ok := parseConf(standalone[:i])
		require.False(t, ok, "cut at %d: %q", i, standalone[:i])
	}
	_, ok = parseConf("This ZooKeeper instance is not currently serving requests\n")
	require.False(t, ok)
	require.Equal(t, "follower", parseMode("Zookeeper version: 3.8.0\nLatency min/avg/max: 0/0.1/3\nMode: follower\nNode count: 5\n"))
	require.Equal(t, "", parseMode("This ZooKeeper instance is not currently serving requests\n"))
}

// Nodes tracked while the epoch ends, now that Track takes the epoch's
// lock rather than the Conn's: every Track that returned true is among the
// nodes the end deletes, and none after the end is.
func TestTrackRacesEpochEnd(t *testing.T) {
	for round := range 20 {
		ep := &epoch{}
		var wg sync.WaitGroup
		tracked := make([][]string, 4)
		for g := range tracked {
			wg.Add(1)
			go func() {
				defer wg.Done()
				for i := range 500 {
					p := fmt.Sprintf("/l/%d-%d", g, i)
					if ep.add(&Tracked{Path: p}) {
						tracked[g] = append(tracked[g], p)
					}
				}
			}()
		}
		ended := ep.end()
		wg.Wait()
		nodes := make(map[string]bool, len(ended))
		for _, tr := range ended {
			nodes[tr.Path] = true
		}
		n := 0
		for _, ps := range tracked {
			for _, p := range ps {
				_, ok := nodes[p]
				require.True(t, ok, "round %d: %s tracked but not deleted at the end", round, p)
				n++
			}
		}
		require.Equal(t, len(nodes), n, "round %d: the end deletes a node no Track accepted", round)
		require.False(t, ep.add(&Tracked{Path: "/l/late"}), "a Track after the end")
	}
}
