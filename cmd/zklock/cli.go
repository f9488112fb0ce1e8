package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock"
)

// cli is one invocation of a subcommand: where it writes and its name, for
// messages.
type cli struct {
	stdout, stderr io.Writer
	name           string
}

// prefix is how every message of the subcommand starts.
func (c *cli) prefix() string {
	if c.name == "" {
		return "zklock: "
	}
	return "zklock " + c.name + ": "
}

// failf reports an error on one line, with a hint after it when there is
// one, and returns code.
func (c *cli) failf(code int, hint, format string, args ...any) int {
	msg := oneLine(fmt.Sprintf(format, args...))
	if hint != "" {
		msg += " (" + hint + ")"
	}
	fmt.Fprintln(c.stderr, c.prefix()+msg)
	return code
}

// usagef reports a usage error and points to the help.
func (c *cli) usagef(format string, args ...any) int {
	hint := "see 'zklock help'"
	if c.name != "" {
		hint = "see 'zklock help " + c.name + "'"
	}
	return c.failf(exitUsage, hint, format, args...)
}

// warnf reports something that does not change the exit code.
func (c *cli) warnf(format string, args ...any) {
	fmt.Fprintln(c.stderr, c.prefix()+oneLine(fmt.Sprintf(format, args...)))
}

// oneLine keeps a message on one line and drops the library's "zklock: "
// prefixes, which the command's own prefix replaces.
func oneLine(s string) string {
	s = strings.ReplaceAll(s, "zklock: ", "")
	return strings.Join(strings.Fields(s), " ")
}

// newFlagSet returns a FlagSet that reports errors to the caller instead of
// printing them, so that run can print them on one line.
func (c *cli) newFlagSet() *flag.FlagSet {
	fs := flag.NewFlagSet("zklock "+c.name, flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	return fs
}

// parse parses args and turns a flag error into an exit code: 0 and false
// for -h (the subcommand's help was printed), exitUsage and false for a bad
// flag.
func (c *cli) parse(fs *flag.FlagSet, args []string) (int, bool) {
	err := fs.Parse(args)
	if errors.Is(err, flag.ErrHelp) {
		return help([]string{c.name}, c.stdout, c.stderr), false
	}
	if err != nil {
		return c.usagef("%v", err), false
	}
	return 0, true
}

// connFlags are the flags of every subcommand that talks to ZooKeeper.
type connFlags struct {
	servers        string
	sessionTimeout time.Duration
	connectTimeout time.Duration
}

func (f *connFlags) register(fs *flag.FlagSet) {
	fs.StringVar(&f.servers, "servers", "", "ZooKeeper servers, host:port,... (default $ZK_SERVERS, else 127.0.0.1:2181)")
	fs.DurationVar(&f.sessionTimeout, "session-timeout", zklock.DefaultSessionTimeout, "session timeout to ask the servers for")
	fs.DurationVar(&f.connectTimeout, "connect-timeout", 15*time.Second, "give up connecting after this long")
}

// open is what a command that only talks to the servers starts with: it
// catches SIGINT and SIGTERM, connects with f, and returns a ctx that ends
// on a signal, the Session, and done, which closes the Session and stops
// catching signals. When the connection fails, s is nil, code is the exit
// code and nothing needs undoing.
func (c *cli) open(f *connFlags) (ctx context.Context, s *zklock.Session, done func(), code int) {
	sigs, stop := catchSignals()
	ctx, unwatch := cancelOnSignal(context.Background(), sigs)
	s, code = c.connect(ctx, f)
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
// code, within --connect-timeout.
func (c *cli) connect(ctx context.Context, f *connFlags) (*zklock.Session, int) {
	addrs := f.resolve()
	if f.sessionTimeout <= 0 || f.connectTimeout <= 0 {
		return nil, c.usagef("--session-timeout and --connect-timeout must be positive")
	}
	ctx, cancel := context.WithTimeout(ctx, f.connectTimeout)
	defer cancel()
	s, err := connectWithin(ctx, zklock.WithServers(addrs...), zklock.WithSessionTimeout(f.sessionTimeout))
	if sc, ok := interrupted(ctx); ok {
		return nil, sc.exitCode()
	}
	switch {
	case errors.Is(err, zklock.ErrInvalidOption):
		return nil, c.usagef("--servers %q: %v", f.servers, err)
	case errors.Is(err, context.DeadlineExceeded):
		return nil, c.failf(exitError, "is ZooKeeper running there? 'zklock dev-server' starts one to try things",
			"cannot connect to %s within %v", f.servers, f.connectTimeout)
	case err != nil:
		return nil, c.failf(exitError, "", "%v", err)
	}
	return s, 0
}

// connectWithin is zklock.NewSession that returns when ctx ends. NewSession
// itself returns only once the connection attempt in progress has ended:
// against a server that accepts and never answers, up to a quarter of the
// session timeout later. The abandoned attempt closes its session, if it
// gets one, when it returns.
func connectWithin(ctx context.Context, opts ...zklock.SessionOption) (*zklock.Session, error) {
	type result struct {
		s   *zklock.Session
		err error
	}
	done := make(chan result, 1)
	go func() {
		s, err := zklock.NewSession(ctx, opts...)
		done <- result{s, err}
	}()
	select {
	case r := <-done:
		return r.s, r.err
	case <-ctx.Done():
		go func() {
			if r := <-done; r.s != nil {
				r.s.Close()
			}
		}()
		return nil, ctx.Err()
	}
}

// opFailed reports a failed operation: a usage error for an argument the
// library refused (a bad path, data too large), otherwise exitError.
func (c *cli) opFailed(err error) int {
	if errors.Is(err, zklock.ErrInvalidPath) || errors.Is(err, zklock.ErrDataTooLarge) {
		return c.usagef("%v", err)
	}
	return c.failf(exitError, "", "%v", err)
}
