package session

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/zklock/zklock/internal/errs"
)

// ErrTimingUnknown is wrapped by Dial's error when the servers run in an
// ensemble and do not tell their timing, and none was stated.
var ErrTimingUnknown = errs.ErrTimingUnknown

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

// The sources of a session's timing (Conn.Timing).
const (
	SourceConf       = "conf"       // the servers' 'conf'
	SourceStated     = "stated"     // WithEnsembleTiming, where a server refuses 'conf', or was not reached and none reached told
	SourceStandalone = "standalone" // no ensemble: no timing needed
	SourceUnknown    = "unknown"    // an ensemble's server does not tell, and nothing was stated
)

// serverFacts is what one server said of itself when last asked.
type serverFacts struct {
	conf    serverConf
	confOK  bool   // its 'conf' answered
	refused bool   // its 'conf' answered and told nothing: not in its whitelist, or cut short
	mode    string // srvr's Mode; "" if it did not answer or does not serve
	version string // srvr's version; "" if it did not say
	// other is the first bytes of its answer in another protocol (an HTTP
	// server's, httpHead): no ZooKeeper server, so no member of the
	// ensemble, whose timing it cannot bear on. "" for any other.
	other string
}

// standalone reports a server that said it is one: no follower, no lag.
// Its 'conf' alone does not say so when its 'srvr' says otherwise
// (settleConf; a conf kept from before, learned).
func (f serverFacts) standalone() bool {
	return f.mode == "standalone" || (f.confOK && !f.conf.quorum && f.mode == "")
}

// settleConf drops a conf shaped like a standalone server's unless the
// server's 'srvr' says standalone: a member's conf cut cleanly before its
// quorum lines reads like a standalone server's whole one, and would hide
// its syncLimit. From a server that serves as a member (its mode says so)
// such an answer tells nothing of its configuration now, and what it told
// before may predate a restart (a rolling restart that raised its
// syncLimit): it counts as refused, not as unanswered (learned keeps an
// unanswered server's last answer). With no mode it is no answer.
func settleConf(f serverFacts) serverFacts {
	if f.confOK && !f.conf.quorum && f.mode != "standalone" {
		f.conf, f.confOK = serverConf{}, false
		f.refused = f.mode != ""
	}
	return f
}

// survey is what the servers said of themselves, kept current: every
// server is asked at NewSession, and the server of each connect again just
// before the connect (dialServer) and after it (learnRole).
type survey struct {
	servers   map[string]serverFacts // by address; never written once stored
	timing    Timing                 // the most cautious of what was learned and stated
	followers bool                   // a server may be a follower (or observer): its replies trail
	floor     time.Duration          // the lowest session timeout a known server would grant; 0 if none known
	source    string                 // Source*
	refusing  []string               // ensemble servers that answered 'srvr' but not 'conf'
	unreached []string               // servers that answered neither (down, electing)
	// watchModes: every server said it runs ZooKeeper 3.9 or later, which
	// keeps a session's watches of different modes on one path apart
	// (ZOOKEEPER-4466). Before 3.9 a one-shot watch set on a path replaces
	// the session's persistent recursive watch there, silently, and the
	// reverse: TrackDir is refused unless it is known.
	watchModes bool
}

// derive computes what servers say, taken together, for c's configuration.
// An ensemble's servers share one configuration, except while a rolling
// restart changes it: the timing is the most cautious any server told, and
// a server that did not answer at all (down, electing) is taken to be like
// those that told until the session connects to it, when it is asked
// again. A server that answers 'srvr' but refuses 'conf' tells nothing:
// only WithEnsembleTiming can stand in for it (SourceStated); without it
// the timing is unknown, and so is any safe deadline.
func (c *Conn) derive(servers map[string]serverFacts) *survey {
	sv := &survey{servers: servers, watchModes: len(c.cfg.Servers) > 0}
	cautious := func(t Timing) {
		if t.lag() > sv.timing.lag() {
			sv.timing = t
		}
	}
	told := false
	for _, addr := range c.cfg.Servers {
		f := servers[addr]
		if f.other != "" {
			continue
		}
		sv.watchModes = sv.watchModes && versionAtLeast(f.version, 3, 9)
		switch {
		case f.confOK && f.conf.quorum:
			sv.followers, told = true, true
			cautious(Timing{Tick: f.conf.tick, SyncLimit: f.conf.syncLimit})
		case f.standalone():
		case f.refused && f.mode != "":
			sv.followers = true
			sv.refusing = append(sv.refusing, addr)
		default:
			sv.followers = true
			sv.unreached = append(sv.unreached, addr)
		}
		if f.confOK {
			if g := f.conf.grant(c.cfg.Timeout); sv.floor == 0 || g < sv.floor {
				sv.floor = g
			}
		}
	}
	unknown := len(sv.refusing) > 0 || (!told && len(sv.unreached) > 0)
	switch {
	case !sv.followers:
		sv.source = SourceStandalone
	case unknown && c.cfg.TimingSet:
		sv.source = SourceStated
	case unknown:
		sv.source = SourceUnknown
	default:
		sv.source = SourceConf
	}
	if c.cfg.TimingSet {
		cautious(c.cfg.Timing) // a floor under what the servers tell
	}
	return sv
}

// grant is the session timeout a server with these bounds grants to a
// request for want.
func (sc serverConf) grant(want time.Duration) time.Duration {
	return min(max(want, sc.minSess), sc.maxSess)
}

// A server is asked again, after a pause that doubles from surveyPause,
// when it does not serve yet (it is electing a leader) or did not answer
// in time (loaded), up to surveyTries times; a server that times out twice,
// or once when every other server has answered, counts as one that did
// not tell, so that a server cut off costs NewSession two handshake
// timeouts at most, and one beside servers that answer. A server that
// cannot be reached at all (refused, no route, no such host) is not asked
// again: nothing listens there now, and the pauses only delayed NewSession
// (3.1s for one dead address in the list). Neither weakens the timing: a
// server that did not tell is taken to be like those that told, and is
// asked again just before the session connects to it (dialServer).
const (
	surveyTries = 6
	surveyPause = 100 * time.Millisecond
)

// surveyServers asks every server for its 'srvr' (its mode, always
// allowed) and its 'conf' (tickTime, syncLimit and session timeout bounds,
// where the four-letter word is allowed), in parallel, within the
// handshake timeout, and records what they said.
func (c *Conn) surveyServers(ctx context.Context) {
	var wg sync.WaitGroup
	for _, addr := range c.cfg.Servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if f, ok := c.askServer(ctx, addr); ok {
				c.learned(addr, f)
			}
		}()
	}
	wg.Wait()
}

// askServer asks addr for its mode and conf (see surveyServers); false if
// it said nothing, and then c.silent says why.
func (c *Conn) askServer(ctx context.Context, addr string) (f serverFacts, ok bool) {
	timeouts := 0
	for try := 0; try < surveyTries && timeouts < 2 && ctx.Err() == nil; try++ {
		if try > 0 {
			t := time.NewTimer(surveyPause << (try - 1))
			select {
			case <-t.C:
			case <-ctx.Done():
				t.Stop()
				return f, false
			}
		}
		out, head, err := c.askWord(ctx, addr, "srvr")
		switch {
		case head != "":
			c.silent.Delete(addr)
			c.notZooKeeper(addr, head)
			return serverFacts{other: head}, true
		case errors.Is(err, context.DeadlineExceeded) || isTimeout(err):
			timeouts++
			c.silent.Store(addr, fmt.Errorf("%w: no answer to 'srvr' within %v", errSilent,
				HandshakeTimeout(c.cfg.Timeout, len(c.cfg.Servers))))
			if c.othersAnswered(addr) {
				return f, false
			}
			continue
		case unreachable(err):
			c.silent.Store(addr, err)
			return f, false
		}
		f.version = parseVersion(out)
		if f.mode = parseMode(out); f.mode == "" {
			c.silent.Store(addr, notServing(out, err))
			continue // not serving yet, or refused: ask again
		}
		c.silent.Delete(addr)
		f.conf, f.confOK, f.refused, head = c.askConf(ctx, addr)
		if head != "" {
			c.notZooKeeper(addr, head)
			return serverFacts{other: head}, true
		}
		return settleConf(f), true
	}
	return f, false
}

// errSilent is what c.silent holds for a server that accepted the
// question and did not answer it in time.
var errSilent = errors.New("silent")

// othersAnswered reports whether every server but addr has told the survey
// something: then a silence of addr's is not the load they share.
func (c *Conn) othersAnswered(addr string) bool {
	told := c.sv.Load().servers
	for _, s := range c.cfg.Servers {
		if _, ok := told[s]; !ok && s != addr {
			return false
		}
	}
	return len(c.cfg.Servers) > 1
}

// unreachable reports a connection that could not be opened at all: no
// server listens there, or the address leads nowhere.
func unreachable(err error) bool {
	var dns *net.DNSError
	return errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.EHOSTUNREACH) ||
		errors.Is(err, syscall.ENETUNREACH) || errors.As(err, &dns)
}

// notServing says why a 'srvr' answer (out, or err) had no mode.
func notServing(out string, err error) error {
	switch {
	case strings.Contains(out, "not currently serving"):
		return errors.New("not serving yet (electing a leader?)")
	case err != nil:
		return err
	case strings.TrimSpace(out) == "":
		return errors.New("closed the connection without answering 'srvr'")
	}
	line, _, _ := strings.Cut(strings.TrimSpace(out), "\n")
	if len(line) > 40 {
		line = line[:40] + "…"
	}
	return fmt.Errorf("answered 'srvr' with %q, not a ZooKeeper server's mode", line)
}

// askConf asks addr for its 'conf': ok if it told, refused if its
// whitelist lacks the word; neither when it did not answer, or does not
// serve yet, which says nothing of its configuration.
// head is the first bytes of an answer in another protocol (httpHead).
func (c *Conn) askConf(ctx context.Context, addr string) (sc serverConf, ok, refused bool, head string) {
	out, head, err := c.askWord(ctx, addr, "conf")
	if head != "" {
		return serverConf{}, false, false, head
	}
	if err != nil || notAllowed(out) {
		return serverConf{}, false, err == nil && strings.Contains(out, "not in the whitelist"), ""
	}
	sc, ok = parseConf(out)
	// An answer that is not a whole conf (cut short) tells nothing, as in
	// settleConf.
	return sc, ok, !ok && strings.TrimSpace(out) != "", ""
}

// askFacts asks addr once for its 'conf', and for its 'srvr' as well when
// conf does not tell an ensemble member's timing or withMode is set; false
// if it said nothing.
func (c *Conn) askFacts(ctx context.Context, addr string, withMode bool) (f serverFacts, ok bool) {
	var head string
	f.conf, f.confOK, f.refused, head = c.askConf(ctx, addr)
	if head != "" {
		return serverFacts{other: head}, true
	}
	if f.confOK && f.conf.quorum && !withMode {
		return f, true
	}
	out, err := c.fourLetter(ctx, addr, "srvr")
	if head := httpHead(out); head != "" {
		return serverFacts{other: head}, true
	}
	if err == nil {
		f.mode, f.version = parseMode(out), parseVersion(out)
	}
	f = settleConf(f)
	return f, f.confOK || f.refused || f.mode != ""
}

// isTimeout reports a network timeout.
func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// learned records what addr said of itself and what follows from it: the
// timing from now on, a WARN the first time the timing rests on
// WithEnsembleTiming, and, once the session is established, the end of
// the ownership epoch when no deadline can be safe any more (a rolling
// restart raised syncLimit past what the timeout leaves, or a server
// stopped telling its conf).
func (c *Conn) learned(addr string, f serverFacts) {
	c.svMu.Lock()
	old := c.sv.Load()
	prev := old.servers[addr]
	if f.version == "" {
		f.version = prev.version
	}
	if !f.confOK && !f.refused && f.other == "" {
		// 'conf' did not answer this time (not serving yet, slow): what
		// the server told before stands; its configuration changes only
		// with a restart, after which it tells again.
		f.conf, f.confOK, f.refused = prev.conf, prev.confOK, prev.refused
		if f.mode == "" {
			f.mode = prev.mode
		}
	}
	servers := maps.Clone(old.servers)
	if servers == nil {
		servers = make(map[string]serverFacts)
	}
	servers[addr] = f
	sv := c.derive(servers)
	c.sv.Store(sv)
	c.svMu.Unlock()
	if sv.timing != old.timing && c.ready.Load() {
		c.logs.add(slog.LevelInfo, "zklock: the servers' timing changed", "server", addr,
			"tick", sv.timing.Tick, "syncLimit", sv.timing.SyncLimit, "source", sv.source)
	}
	c.warnStated(sv)
	c.recheck()
}

// warnStated logs, once, that the deadline rests on WithEnsembleTiming.
func (c *Conn) warnStated(sv *survey) {
	if sv.source != SourceStated || !c.ready.Load() || c.warned.Swap(true) {
		return
	}
	if len(sv.refusing) == 0 {
		// Every server reached told its 'conf'; the stated timing stands in
		// for one that was not reached (the newcomer's pass of issue 47 read
		// "servers do not answer 'conf'" beside a standalone server that did).
		c.logs.add(slog.LevelWarn, "zklock: ensemble timing rests on WithEnsembleTiming: a listed server was not "+
			"reached, and might be an ensemble's follower, whose timing no server reached told",
			"tick", c.cfg.Timing.Tick, "syncLimit", c.cfg.Timing.SyncLimit, "unreached", sv.unreached,
			"fix", "start it, or remove it from the server list")
		return
	}
	c.logs.add(slog.LevelWarn, "zklock: ensemble timing rests on WithEnsembleTiming: servers do not answer 'conf'",
		"tick", c.cfg.Timing.Tick, "syncLimit", c.cfg.Timing.SyncLimit,
		"refusing", sv.refusing, "unreached", sv.unreached,
		"fix", "4lw.commands.whitelist=srvr,conf in every server's zoo.cfg",
		"bounds", "unknown: the ownership epoch ends at every reconnect")
}

// Timing returns the timing in use and its source (Source*).
func (c *Conn) Timing() (Timing, string) {
	sv := c.sv.Load()
	return sv.timing, sv.source
}

// timingErr says why no ownership deadline can be safe with what the
// servers said: their timing is unknown (ErrTimingUnknown), or a follower's
// replies trail further than the session timeout leaves (ErrInvalid); nil
// if a deadline can be safe.
func (c *Conn) timingErr(sv *survey) error {
	if sv.source == SourceUnknown {
		return c.unknownErr(sv)
	}
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
		lag, beat, m, need, sv.source)
}

// unknownErr is timingErr's answer for servers that do not tell. Its
// first sentence is the cause, naming the servers; what to do follows, then
// why (the newcomer's pass of issue 47 got 900 characters that named the
// dead address only in a bracket of the middle).
func (c *Conn) unknownErr(sv *survey) error {
	const why = "Why: the ownership deadline rests on the servers' tickTime and syncLimit (a follower cut off " +
		"from its leader answers its clients for syncLimit×tickTime), and only their 'conf' tells them"
	if len(sv.refusing) > 0 {
		return fmt.Errorf("%w: the servers %v run in an ensemble and refuse the four-letter word 'conf'. "+
			"Add the line 4lw.commands.whitelist=srvr,conf (or *) to every server's zoo.cfg (ZooKeeper's default "+
			"since 3.5.3 is srvr alone), or state the timing with WithEnsembleTiming(tickTime, syncLimit) (the CLI's "+
			"--ensemble-timing TICK,SYNCLIMIT). %s, with the session timeout bounds (minSessionTimeout, "+
			"maxSessionTimeout): with the timing stated and 'conf' refused, zklock uses the timeout each connect "+
			"response granted and ends the ownership epoch at every reconnect", ErrTimingUnknown, sv.refusing, why)
	}
	said := make([]string, len(sv.unreached))
	for i, addr := range sv.unreached {
		said[i] = addr + " did not answer"
		if err, ok := c.silent.Load(addr); ok {
			said[i] += " (" + silenceText(err.(error)) + ")"
		}
	}
	fix := "Start it, correct the server list, or state the timing with WithEnsembleTiming(tickTime, syncLimit) " +
		"(the CLI's --ensemble-timing)"
	for _, addr := range c.cfg.Servers {
		if sv.servers[addr].standalone() {
			fix = fmt.Sprintf("%s is a standalone server, which has no ensemble to share: remove %s from the "+
				"server list", addr, strings.Join(sv.unreached, ", "))
			break
		}
	}
	return fmt.Errorf("%w: %s. %s. %s; a server that says nothing may be a follower",
		ErrTimingUnknown, strings.Join(said, ", "), fix, why)
}

// silenceText says why a server did not answer the survey.
func silenceText(err error) string {
	var dns *net.DNSError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dns):
		return dns.Error()
	case errors.Is(err, errSilent):
		return strings.TrimPrefix(err.Error(), errSilent.Error()+": ")
	}
	return bare(err)
}

// UnansweredError is Dial's last cause when its ctx ended while a server
// had not answered the survey (a silent server holds it up to two
// handshake timeouts): it names the server and why.
type UnansweredError struct {
	Server string
	Err    error
}

func (e *UnansweredError) Error() string {
	return fmt.Sprintf("%s did not answer zklock's 'srvr' (%s)", e.Server, silenceText(e.Err))
}

func (e *UnansweredError) Unwrap() error { return e.Err }

// unansweredErr names the servers the survey still waits for, nil if
// none.
func (c *Conn) unansweredErr() error {
	told := c.sv.Load().servers
	var errs []any
	for _, addr := range c.cfg.Servers {
		if _, ok := told[addr]; ok {
			continue
		}
		why := errors.New("no answer yet")
		if err, ok := c.silent.Load(addr); ok {
			why = err.(error)
		}
		errs = append(errs, &UnansweredError{Server: addr, Err: why})
	}
	if len(errs) == 0 {
		return nil
	}
	return fmt.Errorf(strings.TrimSuffix(strings.Repeat("%w; ", len(errs)), "; "), errs...)
}

// recheck ends the live epoch, once the session is established, when no
// deadline can be safe any more, and says why with the numbers; no epoch
// begins until a deadline can be safe again.
func (c *Conn) recheck() {
	if !c.ready.Load() {
		return
	}
	err := c.timingErr(c.sv.Load())
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil || c.ep == nil {
		return
	}
	sid := c.sid
	c.endEpochLocked(false)
	c.publishLocked(StateLost, sid)
	c.logs.add(slog.LevelWarn, "zklock: the servers' timing leaves no safe ownership deadline; locks held through the session are lost",
		"session", fmt.Sprintf("0x%x", sid), "reason", err.Error())
}

// confirm asks the server the session reached for its facts when no server
// told them during the survey (all were electing a leader, say: a server
// that does not serve does not tell; the one the session reached serves
// now).
func (c *Conn) confirm(ctx context.Context) {
	l := c.cur.Load()
	if l == nil || c.sv.Load().source != SourceUnknown {
		return
	}
	if f, ok := c.askFacts(ctx, l.addr, false); ok {
		c.learned(l.addr, f)
	}
}
