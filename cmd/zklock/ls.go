package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
)

type lsFlags struct {
	conn     connFlags
	asJSON   bool
	maxNodes int
	timeout  time.Duration
}

func (f *lsFlags) register(fs *flag.FlagSet) {
	f.conn.register(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print one JSON array instead of a table")
	fs.IntVar(&f.maxNodes, "max-nodes", 100000, "read at most this many nodes; past it, print what was found and exit 125")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "give up listing after this long (exit 125)")
}

// ls is 'zklock ls [flags] PREFIX'.
func (c *cli) ls(args []string) int {
	var f lsFlags
	fs := c.newFlagSet()
	f.register(fs)
	pos, _, code, ok := c.parseArgs(fs, args, []string{"PREFIX"}, false)
	if !ok {
		return code
	}
	if f.maxNodes < 1 || f.timeout <= 0 {
		return c.usagef("--max-nodes and --timeout must be positive")
	}
	prefix := pos[0]
	if err := checkPrefix(prefix); err != nil {
		return c.usagef("PREFIX %v", err)
	}
	ctx, s, done, code := c.open(&f.conn)
	if s == nil {
		return code
	}
	defer done()
	ctx, cancel := context.WithTimeout(ctx, f.timeout)
	defer cancel()
	w := &walk{ctx: ctx, conn: s.Client(), root: prefix, max: int64(f.maxNodes)}
	if !within(ctx, s, w.run) {
		if sc, ok := interrupted(ctx); ok {
			return sc.exitCode()
		}
	}
	c.printFound(w, f.asJSON)
	return c.walkEnd(w, f.timeout)
}

// checkPrefix accepts "/" and every path a lock may have.
func checkPrefix(p string) error {
	if p == "/" {
		return nil
	}
	return queue.CheckPath(p)
}

// within runs f and returns true when f returns. If ctx ends first (f's
// requests take ctx, but a listing may be between them), it closes s,
// which fails what is left of them, waits for f and returns false.
func within(ctx context.Context, s *zklock.Session, f func()) bool {
	done := make(chan struct{})
	go func() {
		defer close(done)
		f()
	}()
	select {
	case <-done:
		return true
	case <-ctx.Done():
		s.Close()
		<-done
		return false
	}
}

// walkEnd reports why a listing is incomplete, if it is, with exitError.
func (c *cli) walkEnd(w *walk, timeout time.Duration) int {
	prefix := w.root
	switch {
	case w.ctx.Err() != nil:
		return c.failf(exitError, "raise --timeout or narrow PREFIX",
			"listing %s did not finish within %v; the list above is incomplete", prefix, timeout)
	case w.cut.Load():
		return c.failf(exitError, "raise --max-nodes or narrow PREFIX",
			"stopped after reading %s under %s; the list above is incomplete", nodes(w.max), prefix)
	case w.nprob > 0:
		more := ""
		if w.nprob > len(w.problems) {
			more = fmt.Sprintf(" and %d more", w.nprob-len(w.problems))
		}
		return c.failf(exitError, "", "could not read %s%s; the list above is incomplete",
			strings.Join(w.problems, "; "), more)
	}
	return exitOK
}

func (c *cli) printFound(w *walk, asJSON bool) {
	fs := w.found
	if fs == nil {
		fs = []found{} // [] in JSON, not null
	}
	for _, f := range fs {
		if f.Foreign != "" {
			c.warnf("%s also holds %s, a node of another kind of primitive: their holders may not exclude each other", f.Path, f.Foreign)
		}
	}
	if asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(fs)
		return
	}
	cut := w.incomplete()
	switch {
	case w.rootMissing.Load():
		fmt.Fprintf(c.stdout, "%s does not exist: nothing is locked under it\n", printable(w.root, 200))
	case len(fs) == 0 && cut != "":
		// What was not read may hold anything: "no lock" would be a guess.
		fmt.Fprintf(c.stdout, "%s: listing incomplete (%s): nothing found in the part read; what was not "+
			"read may be locked\n", printable(w.root, 200), cut)
	case len(fs) == 0:
		fmt.Fprintf(c.stdout, "%s: no lock, reader/writer lock, semaphore or election under it\n", printable(w.root, 200))
	default:
		printFoundTable(c.stdout, fs)
		if cut != "" {
			fmt.Fprintf(c.stdout, "listing incomplete (%s): what was not read may hold more\n", cut)
		}
	}
}

// incomplete says why the walk did not read everything under its root, ""
// when it did. Stdout says it too, not only stderr and the exit code: a
// reader of the table alone must not take a cut listing for the whole.
func (w *walk) incomplete() string {
	switch {
	case w.ctx.Err() != nil:
		return "--timeout passed"
	case w.cut.Load():
		return "stopped by --max-nodes after " + nodes(w.max)
	case w.nprob > 0:
		return fmt.Sprintf("%d node(s) could not be read", w.nprob)
	}
	return ""
}

func nodes(n int64) string {
	if n == 1 {
		return "1 node"
	}
	return strconv.FormatInt(n, 10) + " nodes"
}

// printFoundTable prints one row per holder (one row with dashes for a
// primitive nobody holds), each with its primitive's path and kind, so
// that a row stands on its own for grep and awk.
func printFoundTable(w io.Writer, fs []found) {
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "PATH\tKIND\tHOLDERS\tWAITERS\tSESSION\tAGE\tTOKEN\tDATA")
	for _, f := range fs {
		holders := strconv.Itoa(len(f.Holders))
		if f.Limit > 0 {
			holders += "/" + strconv.Itoa(f.Limit)
		}
		path := printable(f.Path, 200)
		if len(f.Holders) == 0 {
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t-\t-\t-\t-\n", path, f.Kind, holders, f.WaitingCount)
		}
		for _, e := range f.Holders {
			kind := f.Kind
			if e.Mode != "" {
				kind += "/" + e.Mode
			}
			fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\t%d\t%s\n", path, kind, holders, f.WaitingCount, e.Session,
				age(time.Duration(e.AgeMS)*time.Millisecond), e.Token, dataCell(e))
		}
	}
	tw.Flush()
}
