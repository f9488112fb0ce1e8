package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
)

type electFlags struct {
	conn    connFlags
	observe bool
	asJSON  bool
	timeout time.Duration
	job     jobFlags
}

func (f *electFlags) register(fs *flag.FlagSet) {
	f.conn.register(fs)
	fs.BoolVar(&f.observe, "observe", false, "print the leader and each change of leader until interrupted")
	fs.BoolVar(&f.asJSON, "json", false, "with --observe: print one JSON object per line")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up campaigning after this long (exit 124); 0 waits forever")
	f.job.register(fs)
}

// elect is 'zklock elect [flags] PATH VALUE -- CMD [ARGS...]' and
// 'zklock elect --observe [flags] PATH'.
func (c *cli) elect(args []string) int {
	var f electFlags
	fs := c.newFlagSet()
	f.register(fs)
	names, withCmd := []string{"PATH", "VALUE"}, true
	if observing(args) {
		names, withCmd = []string{"PATH"}, false
	}
	pos, argv, code, ok := c.parseArgs(fs, args, names, withCmd)
	if !ok {
		return f.job.refused(code)
	}
	set := visited(fs)
	if f.observe {
		if code, ok := c.refuse(set, "to --observe", "timeout", "grace", "quiet", "exit-code-file"); !ok {
			return code
		}
		return c.observe(&f, pos[0])
	}
	if code, ok := c.refuse(set, "without --observe", "json"); !ok {
		return f.job.refused(code)
	}
	if f.timeout < 0 || f.job.grace < 0 {
		return f.job.refused(c.usagef("--timeout and --grace cannot be negative"))
	}
	path, value := pos[0], []byte(pos[1])
	j := f.job.job(c, &f.conn, path, argv, f.timeout, set,
		func(ctx context.Context, s *zklock.Session) (grant, error) {
			return campaign(ctx, s, path, value)
		})
	j.elect = true
	return j.do()
}

// observing reports whether the flags before any "--" ask for --observe,
// which takes PATH alone and no command.
func observing(args []string) bool {
	for _, a := range args {
		switch {
		case a == "--":
			return false
		case strings.TrimLeft(a, "-") == "observe" && strings.HasPrefix(a, "-"),
			strings.HasPrefix(strings.TrimLeft(a, "-"), "observe=") && strings.HasPrefix(a, "-"):
			return !strings.HasSuffix(a, "=false")
		}
	}
	return false
}

func campaign(ctx context.Context, s *zklock.Session, path string, value []byte) (grant, error) {
	if err := checkKind(ctx, s, path, kindLock); err != nil {
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
	return grant{lost: t.Lost(), token: t.Token(), node: guardPath(t.Guard()), release: e.Resign}, nil
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
	Time    stamp  `json:"time"`
	Leader  bool   `json:"leader"` // false: no leader
	Value   string `json:"value,omitempty"`
	Session string `json:"session,omitempty"`
	Token   int64  `json:"token,omitempty"`
	Node    string `json:"node,omitempty"`
	// Created is when the leader's node was created, by the server's
	// clock: when it became a candidate, not when it began to lead (which
	// ZooKeeper does not record), as status's created is for a holder.
	Created *stamp `json:"created,omitempty"`
	// Revoke: a revocation request was written into the leader's node
	// (zklock revoke, Curator's Revoker); its value is the request.
	Revoke bool `json:"revocation_requested,omitempty"`
}

func (c *cli) printLeader(info zklock.LeaderInfo, asJSON bool) {
	now := time.Now()
	l := leaderLine{Time: stamp(now), Leader: info.Node != ""}
	if l.Leader {
		l.Value, l.Session, l.Token = string(info.Value), fmt.Sprintf("0x%x", info.Session), info.Token
		created := stamp(info.Created)
		l.Node, l.Created = info.Node, &created
		l.Revoke = l.Value == queue.RevokeMessage
	}
	if asJSON {
		_ = json.NewEncoder(c.stdout).Encode(l)
		return
	}
	at := now.Format(timeFormat)
	if !l.Leader {
		fmt.Fprintf(c.stdout, "%s no leader\n", at)
		return
	}
	value := printable(l.Value, 60)
	if l.Revoke { // its value is the request now, as status says
		value = "with revocation requested"
	}
	fmt.Fprintf(c.stdout, "%s leader %s (session %s, token %d, node created %s)\n", at,
		value, l.Session, l.Token, info.Created.Format(timeFormat))
}

const timeFormat = "2006-01-02T15:04:05.000Z07:00"
