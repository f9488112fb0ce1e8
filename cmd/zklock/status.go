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
	"unicode"
	"unicode/utf8"
)

type statusFlags struct {
	conn   connFlags
	asJSON bool
	kind   string
	watch  bool
}

func (f *statusFlags) register(fs *flag.FlagSet) {
	f.conn.register(fs)
	fs.BoolVar(&f.asJSON, "json", false, "print JSON instead of a table")
	fs.StringVar(&f.kind, "kind", "auto", "what PATH must hold, checked: auto, mutex, rwmutex or semaphore (ls's names; lock and rw "+
		"are mutex and rwmutex)")
	fs.BoolVar(&f.watch, "watch", false, "print the state again on every change until interrupted (with --json, one object per line)")
}

// status is 'zklock status [flags] PATH'.
func (c *cli) status(args []string) int {
	var f statusFlags
	fs := c.newFlagSet()
	f.register(fs)
	pos, _, code, ok := c.parseArgs(fs, args, []string{"PATH"}, false)
	if !ok {
		return code
	}
	path, kind := pos[0], f.kind
	switch kind {
	case "auto":
		kind = ""
	case lsMutex, kindLock: // ls's name, or the older one
		kind = kindLock
	case lsRWMutex, kindRW:
		kind = kindRW
	case kindSemaphore:
	default:
		return c.usagef("--kind %q: want auto, mutex, rwmutex or semaphore", kind)
	}
	ctx, s, done, code := c.open(&f.conn)
	if s == nil {
		return code
	}
	defer done()
	if f.watch {
		return c.watchStatus(ctx, s, path, kind, f.asJSON)
	}
	ctx, cancel := context.WithTimeout(ctx, f.conn.connectTimeout)
	defer cancel()
	r, err := list(ctx, s, path, kind)
	if err != nil {
		return c.opFailed(err)
	}
	if f.asJSON {
		enc := json.NewEncoder(c.stdout)
		enc.SetIndent("", "  ")
		_ = enc.Encode(r)
	} else {
		printTable(c.stdout, r)
	}
	return exitOK
}

func printTable(w io.Writer, r report) {
	if len(r.Holders)+len(r.Waiting) == 0 {
		fmt.Fprintf(w, "%s: free, nobody waiting\n", r.Path)
		return
	}
	what := r.Kind
	if r.Limit > 0 {
		what += " of " + strconv.Itoa(r.Limit)
	}
	fmt.Fprintf(w, "%s: %s, %d holding, %d waiting\n", r.Path, what, len(r.Holders), len(r.Waiting))
	tw := tabwriter.NewWriter(w, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "#\tROLE\tSESSION\tAGE\tTOKEN\tDATA\tNODE")
	for i, e := range append(r.Holders, r.Waiting...) {
		role := e.Role
		if e.Mode != "" {
			role += " (" + e.Mode + ")"
		}
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\t%d\t%s\t%s\n", i+1, role, e.Session,
			age(time.Duration(e.AgeMS)*time.Millisecond), e.Token, dataCell(e), baseName(e.Node))
	}
	tw.Flush()
}

func age(d time.Duration) string {
	switch {
	case d < 0:
		return "0s"
	case d < 10*time.Second:
		return d.Round(100 * time.Millisecond).String()
	}
	return d.Round(time.Second).String()
}

// printable quotes data that would garble a terminal and shortens it to n
// runes.
func printable(s string, n int) string {
	if !utf8.ValidString(s) || strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsPrint(r) }) {
		s = strconv.Quote(s)
	}
	if r := []rune(s); len(r) > n {
		s = string(r[:n-1]) + "…"
	}
	return s
}

func baseName(p string) string { return p[strings.LastIndex(p, "/")+1:] }
