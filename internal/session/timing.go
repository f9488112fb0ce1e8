package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"sync"
	"time"
)

// Timing is the part of the servers' configuration that says how stale a
// follower's reply can be: their tickTime, and syncLimit, the ticks a
// follower goes on serving its clients after it last heard from its leader.
//
// Where session expiry lives (ZooKeeper 3.5 to 3.9; docs/ownership.md has
// the whole argument): only the leader expires sessions. A request that
// reaches the leader, or a (re)connect anywhere (a follower revalidates the
// session with the leader before it answers), restarts the leader's clock
// for the session at once. A follower only notes its clients' requests and
// hands them to the leader in its answer to the leader's next ping (every
// tickTime/2). A follower that lost its leader answers its clients until
// syncLimit*tickTime has passed without a packet from the leader (or until
// the leader, which stops hearing it after as long, closes the link). So a
// reply from a follower proves only that the leader saw the requests the
// follower had noted about syncLimit*tickTime + tickTime/2 before it
// answered.
type Timing struct {
	Tick      time.Duration
	SyncLimit int
}

// lag bounds how long before a follower answered a request the requests
// it had noted may still not have reached the leader: syncLimit ticks for
// the follower to notice that it lost its leader, half a tick between the
// pings that carry the notes, and half a tick for the leader's ping loop
// and the network between the servers.
func (t Timing) lag() time.Duration { return time.Duration(t.SyncLimit)*t.Tick + t.Tick }

// beat is how often the session asks a follower something when it has
// nothing else to ask, so that replies keep coming at least that often:
// the deadline behind a follower's replies trails by lag plus the longest
// gap between them.
func (t Timing) beat() time.Duration { return max(t.Tick/2, 5*time.Millisecond) }

// survey is what the servers said of themselves when the session began.
type survey struct {
	timing    Timing          // the most cautious of what was learned and configured
	followers bool            // a server may be a follower (or observer): its replies trail
	floor     time.Duration   // the lowest session timeout a known server would grant; 0 if none known
	told      string          // how the timing was learned, for error messages
	unknown   map[string]bool // servers that did not tell their conf
	guessed   bool            // no server told: the timing is ZooKeeper's sample (or the caller's)
	// watchModes: every server said it runs ZooKeeper 3.9 or later, which
	// keeps a session's watches of different modes on one path apart
	// (ZOOKEEPER-4466). Before 3.9 a one-shot watch set on a path replaces
	// the session's persistent recursive watch there, silently, and the
	// reverse: TrackDir is refused unless it is known.
	watchModes bool
}

// A server is asked again, after a pause that doubles from surveyPause,
// when it does not serve yet (it is electing a leader) or did not answer
// in time (loaded), up to surveyTries times; a server that times out twice
// counts as one that did not tell, so that a server cut off costs
// NewSession two handshake timeouts at most.
const (
	surveyTries = 6
	surveyPause = 100 * time.Millisecond
)

// surveyServers asks every server for its 'conf' (tickTime, syncLimit and
// session timeout bounds, where the four-letter word is allowed) and its
// 'srvr' (its mode, always allowed), in parallel, within the handshake
// timeout. A server that does not answer may be a follower.
func (c *Conn) surveyServers(ctx context.Context) survey {
	answers := make([]surveyAnswer, len(c.cfg.Servers))
	var wg sync.WaitGroup
	for i, addr := range c.cfg.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			answers[i] = c.askServer(ctx, addr)
		}()
	}
	wg.Wait()
	sv := survey{told: "the servers' conf"}
	cautious := func(t Timing) {
		if t.lag() > sv.timing.lag() {
			sv.timing = t
		}
	}
	if c.cfg.TimingSet {
		cautious(c.cfg.Timing)
		sv.told = "WithEnsembleTiming and the servers' conf"
	}
	unknown, told := false, false
	sv.watchModes = len(answers) > 0
	for i, a := range answers {
		sv.watchModes = sv.watchModes && versionAtLeast(a.version, 3, 9)
		switch {
		case a.ok && a.conf.quorum:
			sv.followers, told = true, true
			cautious(Timing{Tick: a.conf.tick, SyncLimit: a.conf.syncLimit})
		case a.ok || a.mode == "standalone":
		default:
			sv.followers, unknown = true, true
		}
		if !a.ok && a.mode != "standalone" {
			if sv.unknown == nil {
				sv.unknown = make(map[string]bool)
			}
			sv.unknown[c.cfg.Servers[i]] = true
		}
		if a.ok {
			g := min(max(c.cfg.Timeout, a.conf.minSess), a.conf.maxSess)
			if sv.floor == 0 || g < sv.floor {
				sv.floor = g
			}
		}
	}
	// A server that did not tell (down, or 'conf' not allowed) is taken to
	// be configured like those that did, as an ensemble's servers share one
	// configuration; when none told, ZooKeeper's sample (or the caller's)
	// timing stands.
	if unknown && !told {
		cautious(c.cfg.Timing)
		sv.guessed = true
		if !c.cfg.TimingSet {
			sv.told = "ZooKeeper's sample configuration (no server answered 'conf'; see WithEnsembleTiming)"
		}
	}
	return sv
}

// surveyAnswer is what one server said of itself.
type surveyAnswer struct {
	conf    serverConf
	ok      bool   // conf answered
	mode    string // srvr's Mode; "" if it did not answer or does not serve
	version string // srvr's version ("3.8.0-5a02a05e..."); "" if it did not say
}

// askServer asks addr for its mode and conf (see surveyServers).
func (c *Conn) askServer(ctx context.Context, addr string) (a surveyAnswer) {
	timeouts := 0
	for try := 0; try < surveyTries && timeouts < 2 && ctx.Err() == nil; try++ {
		if try > 0 {
			t := time.NewTimer(surveyPause << (try - 1))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return a
			}
		}
		out, err := c.fourLetter(ctx, addr, "srvr")
		if errors.Is(err, context.DeadlineExceeded) || isTimeout(err) {
			timeouts++
			continue
		}
		a.version = parseVersion(out)
		if a.mode = parseMode(out); a.mode == "" {
			continue // not serving yet, or refused: ask again
		}
		if out, err := c.fourLetter(ctx, addr, "conf"); err == nil && !notAllowed(out) {
			a.conf, a.ok = parseConf(out)
		}
		return a
	}
	return a
}

// isTimeout reports a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// checkTiming refuses a session whose deadline, trailing a follower's
// replies, could never be ahead of the present: the holder would have no
// time to hold.
func (c *Conn) checkTiming() error {
	sv := c.sv.Load()
	if !sv.followers {
		return nil
	}
	t := c.Timeout()
	m := c.margin(t)
	lag, beat := sv.timing.lag(), sv.timing.beat()
	if t-m > lag+beat {
		return nil
	}
	need := lag + beat + c.cfg.Margin // the timeout must exceed it
	if c.cfg.Margin == 0 {
		need = (lag + beat) * 5 / 4 // the default margin is a fifth of the timeout
	}
	return fmt.Errorf("%w: session timeout %v leaves no time to hold through a follower: "+
		"a follower cut off from its leader answers for up to syncLimit×tickTime = %d×%v = %v, "+
		"so its replies prove the leader's clock only to %v before them (that plus a tick), "+
		"and zklock asks it something every %v; with the safety margin (%v at this timeout) "+
		"the session timeout must exceed %v (timing from %s). "+
		"Raise WithSessionTimeout, or lower the servers' syncLimit×tickTime",
		ErrInvalid, t, sv.timing.SyncLimit, sv.timing.Tick, time.Duration(sv.timing.SyncLimit)*sv.timing.Tick,
		lag, beat, m, need, sv.told)
}

// confirmGuess asks the server the session reached for its conf when no
// server told it during the survey (all were electing a leader, say: a
// server that does not serve does not tell; the one the session reached
// serves now). Its timing then stands in for the sample's, as a server that
// told would have at the survey (an ensemble's servers share one
// configuration); a caller's WithEnsembleTiming stays a floor.
func (c *Conn) confirmGuess(ctx context.Context) {
	sv, l := c.sv.Load(), c.cur.Load()
	if !sv.guessed || l == nil {
		return
	}
	out, err := c.fourLetter(ctx, l.addr, "conf")
	if err != nil || notAllowed(out) {
		return
	}
	sc, ok := parseConf(out)
	if !ok {
		return
	}
	next := *sv
	next.guessed = false
	next.timing = Timing{Tick: sc.tick, SyncLimit: sc.syncLimit}
	next.followers = sc.quorum
	next.told = "the conf of the server the session reached (none answered at the survey)"
	if c.cfg.TimingSet && c.cfg.Timing.lag() > next.timing.lag() {
		next.timing = c.cfg.Timing
		next.told = "WithEnsembleTiming and " + next.told
	}
	if next.unknown != nil {
		next.unknown = maps.Clone(next.unknown)
		delete(next.unknown, l.addr)
	}
	c.sv.CompareAndSwap(sv, &next)
}

// learnConf asks a server that did not tell its conf when the session
// began, now that the session reached it; a server whose followers lag
// more than assumed raises the lag from now on.
func (c *Conn) learnConf(addr string) {
	sv := c.sv.Load()
	if !sv.unknown[addr] {
		return
	}
	out, err := c.fourLetter(c.bg, addr, "conf")
	if err != nil || notAllowed(out) {
		return
	}
	sc, ok := parseConf(out)
	if !ok || !sc.quorum {
		return
	}
	t := Timing{Tick: sc.tick, SyncLimit: sc.syncLimit}
	for {
		sv = c.sv.Load()
		if t.lag() <= sv.timing.lag() {
			return
		}
		next := *sv
		next.timing = t
		if c.sv.CompareAndSwap(sv, &next) {
			c.logs.add(slog.LevelWarn, "zklock: a server's followers lag more than assumed at NewSession: "+
				"the ownership deadline now trails further", "server", addr, "tick", sc.tick, "syncLimit", sc.syncLimit)
			return
		}
	}
}
