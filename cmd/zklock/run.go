package main

import (
	"flag"
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
	revoc   bool // --revocable
	job     jobFlags
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
	fs.BoolVar(&f.revoc, "revocable", false, "honour 'zklock revoke' (and Curator's Revoker): on a request, end the "+
		"command as on a loss of the lock (SIGTERM, SIGKILL after --grace, exit 123), then release; not with -n")
	f.job.register(fs)
}

// run is 'zklock run [flags] PATH -- CMD [ARGS...]'.
func (c *cli) run(args []string) int {
	var f runFlags
	fs := c.newFlagSet()
	f.register(fs)
	pos, argv, code, ok := c.parseArgs(fs, args, []string{"PATH"}, true)
	if !ok {
		return f.job.refused(code)
	}
	path := pos[0]
	f.set = visited(fs)
	if code, ok := c.checkRunFlags(&f); !ok {
		return f.job.refused(code)
	}
	j := f.job.job(c, &f.conn, path, f.kind(), argv, f.timeout, f.set, f.acquirer(path))
	j.try = f.try
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
	case f.set["n"] && f.revoc:
		return c.usagef("--revocable applies to a lock or a reader/writer lock: no semaphore is revocable"), false
	case f.shared && f.write:
		return c.usagef("--shared and --write exclude each other"), false
	case f.try && f.set["timeout"]:
		return c.usagef("--try and --timeout exclude each other"), false
	case f.timeout < 0 || f.job.grace < 0:
		return c.usagef("--timeout and --grace cannot be negative"), false
	}
	return 0, true
}
