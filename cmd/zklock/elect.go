package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"time"

	"github.com/zklock/zklock"
)

type electFlags struct {
	conn    connFlags
	observe bool
	asJSON  bool
	timeout time.Duration
	grace   time.Duration
}

func (f *electFlags) register(fs *flag.FlagSet) {
	f.conn.register(fs)
	fs.BoolVar(&f.observe, "observe", false, "print the leader and each change of leader until interrupted")
	fs.BoolVar(&f.asJSON, "json", false, "with --observe: print one JSON object per line")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up campaigning after this long (exit 124); 0 waits forever")
	fs.DurationVar(&f.grace, "grace", 5*time.Second, "on loss of leadership, SIGKILL the command this long after SIGTERM")
}

// elect is 'zklock elect [flags] PATH VALUE -- CMD [ARGS...]' and
// 'zklock elect --observe [flags] PATH'.
func (c *cli) elect(args []string) int {
	var f electFlags
	fs := c.newFlagSet()
	f.register(fs)
	if code, ok := c.parse(fs, args); !ok {
		return code
	}
	if f.observe {
		if fs.NArg() != 1 {
			return c.usagef("--observe wants exactly one PATH, got %d arguments", fs.NArg())
		}
		return c.observe(&f, fs.Arg(0))
	}
	pos, argv, code, ok := c.parseCommand(fs, args, "PATH", "VALUE")
	if !ok {
		return code
	}
	if f.timeout < 0 || f.grace < 0 {
		return c.usagef("--timeout and --grace cannot be negative")
	}
	path, value := pos[0], []byte(pos[1])
	j := &job{cli: c, conn: &f.conn, path: path, argv: argv, timeout: f.timeout, grace: f.grace,
		acquire: func(ctx context.Context, s *zklock.Session) (grant, error) {
			return campaign(ctx, s, path, value)
		},
		describe: func(ctx context.Context, s *zklock.Session) string {
			return summarize(ctx, s, path, kindLock)
		}}
	return j.do()
}

func campaign(ctx context.Context, s *zklock.Session, path string, value []byte) (grant, error) {
	if err := checkKind(s, path, kindLock); err != nil {
		return grant{}, err
	}
	e, err := zklock.NewElection(s, path)
	if err != nil {
		return grant{}, err
	}
	t, err := e.Campaign(ctx, value)
	if err != nil {
		return grant{}, err
	}
	return grant{lost: t.Lost(), token: t.Token(), node: t.Node(), release: e.Resign}, nil
}

// observe prints the leader of path and every change until a signal.
func (c *cli) observe(f *electFlags, path string) int {
	ctx, s, done, code := c.open(&f.conn)
	if s == nil {
		return code
	}
	defer done()
	e, err := zklock.NewElection(s, path)
	if err != nil {
		return c.opFailed(err)
	}
	ch, err := e.Observe(ctx)
	if err != nil {
		return c.opFailed(err)
	}
	for info := range ch {
		c.printLeader(info, f.asJSON)
	}
	if _, ok := interrupted(ctx); ok {
		return exitOK
	}
	return c.failf(exitError, "", "observing %s: the session ended", path)
}

// leaderLine is one leader change, as --observe --json prints it.
type leaderLine struct {
	Time    time.Time  `json:"time"`
	Leader  bool       `json:"leader"` // false: no leader
	Value   string     `json:"value,omitempty"`
	Session string     `json:"session,omitempty"`
	Token   int64      `json:"token,omitempty"`
	Node    string     `json:"node,omitempty"`
	Since   *time.Time `json:"since,omitempty"`
}

func (c *cli) printLeader(info zklock.LeaderInfo, asJSON bool) {
	l := leaderLine{Time: time.Now(), Leader: info.Node != ""}
	if l.Leader {
		l.Value, l.Session, l.Token = string(info.Value), fmt.Sprintf("0x%x", info.Session), info.Token
		l.Node, l.Since = info.Node, &info.Since
	}
	if asJSON {
		_ = json.NewEncoder(c.stdout).Encode(l)
		return
	}
	stamp := l.Time.Format(timeFormat)
	if !l.Leader {
		fmt.Fprintf(c.stdout, "%s no leader\n", stamp)
		return
	}
	fmt.Fprintf(c.stdout, "%s leader %s (session %s, token %d, since %s)\n", stamp,
		printable(l.Value, 60), l.Session, l.Token, info.Since.Format(timeFormat))
}

const timeFormat = "2006-01-02T15:04:05.000Z07:00"
