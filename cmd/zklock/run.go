package main

import (
	"flag"
	"strings"
	"time"
)

// runFlags are the flags of zklock run.
type runFlags struct {
	conn    connFlags
	n       int
	timeout time.Duration
	try     bool
	shared  bool
	write   bool
	data    string
	queue   bool
	grace   time.Duration
	set     map[string]bool // flags given on the command line
}

func (f *runFlags) register(fs *flag.FlagSet) {
	f.conn.register(fs)
	fs.IntVar(&f.n, "n", 0, "take one slot of a semaphore of limit `K` instead of a lock")
	fs.DurationVar(&f.timeout, "timeout", 0, "give up waiting after this long (exit 124); 0 waits forever")
	fs.BoolVar(&f.queue, "queue", false, "with -n: the semaphore's one-queue layout (zklock only; Curator cannot share it)")
	fs.BoolVar(&f.try, "try", false, "do not wait: exit 122 at once if the lock is taken")
	fs.BoolVar(&f.shared, "shared", false, "take the read lock of a reader/writer lock")
	fs.BoolVar(&f.write, "write", false, "take the write lock of a reader/writer lock (excludes --shared holders)")
	fs.StringVar(&f.data, "data", "", "holder metadata shown by 'zklock status' (default host:pid)")
	fs.DurationVar(&f.grace, "grace", 5*time.Second, "on loss of the lock, SIGKILL the command this long after SIGTERM")
}

// run is 'zklock run [flags] PATH -- CMD [ARGS...]'.
func (c *cli) run(args []string) int {
	var f runFlags
	fs := c.newFlagSet()
	f.register(fs)
	pos, argv, code, ok := c.parseCommand(fs, args, "PATH")
	if !ok {
		return code
	}
	path := pos[0]
	f.set = visited(fs)
	if code, ok := c.checkRunFlags(&f); !ok {
		return code
	}
	j := &job{cli: c, conn: &f.conn, path: path, argv: argv, timeout: f.timeout, grace: f.grace,
		acquire: f.acquirer(path), describe: f.describer(path)}
	return j.do()
}

func (c *cli) checkRunFlags(f *runFlags) (int, bool) {
	switch {
	case f.set["n"] && f.n < 1:
		return c.usagef("-n %d: the limit must be at least 1", f.n), false
	case f.queue && !f.set["n"]:
		return c.usagef("--queue is a semaphore's layout: give -n with the limit"), false
	case f.set["n"] && (f.shared || f.write):
		return c.usagef("-n cannot be combined with --shared or --write"), false
	case f.shared && f.write:
		return c.usagef("--shared and --write exclude each other"), false
	case f.try && f.set["timeout"]:
		return c.usagef("--try and --timeout exclude each other"), false
	case f.timeout < 0 || f.grace < 0:
		return c.usagef("--timeout and --grace cannot be negative"), false
	}
	return 0, true
}

// parseCommand parses 'FLAGS POSITIONAL... [FLAGS] [--] CMD ARGS...', the
// positional arguments named by names. Flags may also follow the positional
// arguments; a "--" ends them.
func (c *cli) parseCommand(fs *flag.FlagSet, args []string, names ...string) ([]string, []string, int, bool) {
	if code, ok := c.parse(fs, args); !ok {
		return nil, nil, code, false
	}
	rest := fs.Args()
	if len(rest) < len(names) {
		return nil, nil, c.usagef("missing %s", strings.Join(names[len(rest):], " ")), false
	}
	pos, rest := rest[:len(names)], rest[len(names):]
	if len(rest) > 0 && rest[0] != "--" {
		if code, ok := c.parse(fs, rest); !ok {
			return nil, nil, code, false
		}
		rest = fs.Args()
	} else if len(rest) > 0 {
		rest = rest[1:]
	}
	if len(rest) == 0 {
		return nil, nil, c.usagef("missing command: zklock %s [flags] %s -- CMD [ARGS...]",
			c.name, strings.Join(names, " ")), false
	}
	return pos, rest, 0, true
}

// visited returns the names of the flags given on the command line.
func visited(fs *flag.FlagSet) map[string]bool {
	set := make(map[string]bool)
	fs.Visit(func(f *flag.Flag) { set[f.Name] = true })
	return set
}
