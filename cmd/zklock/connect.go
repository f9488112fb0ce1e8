package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/session"
	"github.com/zklock/zklock/zk"
)

// connFlags are the flags of every subcommand that talks to ZooKeeper.
type connFlags struct {
	servers        string
	sessionTimeout time.Duration
	connectTimeout time.Duration
	ensembleTiming string // TICK,SYNCLIMIT: zklock.WithEnsembleTiming
	sec            secFlags
	quiet          bool // a job's --quiet: say nothing while connecting but the failure
}

func (f *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.servers, "servers", "", "ZooKeeper servers, host:port,... (default $ZK_SERVERS, else 127.0.0.1:2181)")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", defaultSessionTimeout, "session timeout to ask the servers for")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", 15*time.Second, "give up connecting after this long")
	fs.StringVar(&f.ensembleTiming, "ensemble-timing", "", "the servers' `TICK,SYNCLIMIT` (e.g. 2s,10), for servers that do not answer 'conf'")
	f.sec.register(fs)
}

// open is what a command that only talks to the servers starts with: it
// catches SIGINT and SIGTERM, connects with f, and returns a ctx that ends
// on a signal, the Session, and done, which closes the Session and stops
// catching signals. When the connection fails, s is nil, code is the exit
// code and nothing needs undoing.
func (c *cli) open(f *connFlags) (ctx context.Context, s *zklock.Session, done func(), code int) {
	sigs, stop := catchSignals()
	ctx, unwatch := cancelOnSignal(context.Background(), sigs)
	s, code, _ = c.connect(ctx, f)
	if s == nil {
		unwatch()
		stop()
		return nil, nil, nil, code
	}
	return ctx, s, func() {
		s.Close()
		unwatch()
		stop()
	}, exitOK
}

// envServers names the environment variable the CLI takes its servers
// from, as etcdctl and consul take theirs (zktest has a variable of its
// own, which the CLI does not read).
const envServers = "ZK_SERVERS"

// defaultSessionTimeout is the library's default (WithSessionTimeout
// states it): the flag shows it in --help.
const defaultSessionTimeout = 30 * time.Second

// resolve fills in the servers from $ZK_SERVERS or the default, and
// returns them as addresses.
func (f *connFlags) resolve() []string {
	if f.servers == "" {
		f.servers = os.Getenv(envServers)
	}
	if f.servers == "" {
		f.servers = "127.0.0.1:2181"
	}
	var addrs []string
	for _, a := range strings.Split(f.servers, ",") {
		if a = strings.TrimSpace(a); a != "" {
			addrs = append(addrs, a)
		}
	}
	return addrs
}

// connect establishes the session, or fails with a message and an exit
// code, within --connect-timeout. While it connects it says why each
// attempt failed (see dialer); spoke tells whether it said anything.
func (c *cli) connect(ctx context.Context, f *connFlags) (s *zklock.Session, code int, spoke bool) {
	addrs := f.resolve()
	if f.sessionTimeout <= 0 || f.connectTimeout <= 0 {
		return nil, c.usagef("--session-timeout and --connect-timeout must be positive"), false
	}
	sec, err := f.sec.options()
	if err != nil { // its message never holds a password
		return nil, c.usagef("%v", err), false
	}
	timing, err := f.timingOption()
	if err != nil {
		return nil, c.usagef("%v", err), false
	}
	ctx, cancel := context.WithTimeout(ctx, f.connectTimeout)
	defer cancel()
	d := newDialer(c, f)
	opts := append(sec.opts, zklock.WithServers(addrs...), zklock.WithSessionTimeout(f.sessionTimeout),
		zklock.WithLogger(slog.New(d.log)))
	if timing != nil {
		opts = append(opts, timing)
	}
	s, err = d.connect(ctx, opts)
	if sc, ok := interrupted(ctx); ok {
		return nil, sc.exitCode(), d.spoke
	}
	switch {
	case errors.Is(err, zklock.ErrInvalidArgument):
		return nil, c.usagef("--servers %q: %v", f.servers, err), d.spoke
	case errors.Is(err, zklock.ErrTimingUnknown):
		return nil, c.failf(exitError, "", "%v", err), d.spoke // it names both fixes
	case errors.Is(err, zk.ErrNotZooKeeper):
		// Said at once: every server answered in another protocol, so
		// waiting out --connect-timeout could only repeat it.
		return nil, c.failf(exitError, notZooKeeperHint, "cannot %s", strings.TrimPrefix(err.Error(), "zklock: ")), d.spoke
	case errors.Is(err, zk.ErrAuthFailed):
		return nil, c.failf(exitError, "check "+sec.credFrom, "the servers rejected the credentials of user %q", sec.user), d.spoke
	case errors.Is(err, context.DeadlineExceeded):
		msg, hint := "cannot connect to "+f.servers+" within "+f.connectTimeout.String(), d.hint()
		cause := d.lastCause(len(addrs) > 1)
		var ue *session.UnansweredError
		if errors.As(err, &ue) {
			// Connected, and still waiting for a server's answer to the
			// survey of the servers' timing: that server is the cause.
			cause, hint = ue.Error(), silentHint
		}
		if cause != "" {
			msg += ": " + cause
		}
		return nil, c.failf(exitError, hint, "%s", msg), d.spoke
	case err != nil:
		return nil, c.failf(exitError, "", "%v", err), d.spoke
	}
	if t := s.Client().Timing(); t.Source == "stated" && !f.quiet {
		// Stated is used when a server refuses 'conf' or one was not
		// reached (and might be a follower): the library's WARN says which.
		c.warnf("the servers' 'conf' did not tell their timing (a server refuses it, or was not reached): the lock's "+
			"loss signal rests on --ensemble-timing %v,%d; where 'conf' is refused, every reconnect ends the hold", t.Tick, t.SyncLimit)
		d.spoke = true
	}
	return s, 0, d.spoke
}

// timingOption returns --ensemble-timing as a session option, or nil.
func (f *connFlags) timingOption() (zklock.SessionOption, error) {
	if f.ensembleTiming == "" {
		return nil, nil
	}
	tick, limit, ok := strings.Cut(f.ensembleTiming, ",")
	d, err1 := time.ParseDuration(strings.TrimSpace(tick))
	n, err2 := strconv.Atoi(strings.TrimSpace(limit))
	if !ok || err1 != nil || err2 != nil || d < time.Millisecond || n < 1 {
		return nil, fmt.Errorf("--ensemble-timing %q: want TICK,SYNCLIMIT, as the servers' tickTime and syncLimit (e.g. 2s,10)", f.ensembleTiming)
	}
	return zklock.WithEnsembleTiming(d, n), nil
}
