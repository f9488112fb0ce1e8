package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock"
)

// watchStatus is 'zklock status --watch': it prints the state of path, then
// each new state (zklock.WatchLock's), until a signal.
func (c *cli) watchStatus(ctx context.Context, s *zklock.Session, path, kind string, asJSON bool) int {
	if err := checkPath(s, path); err != nil {
		return c.opFailed(err)
	}
	var mu sync.Mutex
	lastErr := "" // the failure last warned of, until a state is read
	states, err := watchLock(ctx, s, path, kind, func(err error) {
		mu.Lock()
		defer mu.Unlock()
		if msg := oneLine(err.Error()); msg != lastErr {
			c.warnf("cannot list %s: %s; trying again", path, msg)
			lastErr = msg
		}
	})
	if err != nil {
		return c.opFailed(err)
	}
	out := &statusPrinter{w: c.stdout, asJSON: asJSON, tty: !asJSON && isTerminal(c.stdout)}
	for st := range states {
		mu.Lock()
		lastErr = ""
		mu.Unlock()
		r := newReport(st)
		tellMutex(ctx, s, &r)
		out.show(r)
	}
	if _, ok := interrupted(ctx); ok {
		return exitOK
	}
	return c.failf(exitError, "", "watching %s: the session ended", path)
}

// statusPrinter prints each new state: on a terminal in place of the last
// one, otherwise after it, separated by a blank line; with --json one object
// per line.
type statusPrinter struct {
	w           io.Writer
	asJSON, tty bool
	last        string // the state last printed, ages aside
	shown       bool
}

func (p *statusPrinter) show(r report) {
	sig := signature(r)
	if p.shown && sig == p.last {
		return // nothing that shows changed: a reconnect, say
	}
	p.last = sig
	now := time.Now()
	switch {
	case p.asJSON:
		_ = json.NewEncoder(p.w).Encode(struct {
			Time stamp `json:"time"`
			report
		}{stamp(now), r})
	case p.tty:
		fmt.Fprintf(p.w, "\033[H\033[2J%s  (every change; Ctrl-C to stop)\n\n", now.Format(timeFormat))
		printTable(p.w, r)
	default:
		if p.shown {
			fmt.Fprintln(p.w)
		}
		fmt.Fprintln(p.w, now.Format(timeFormat))
		printTable(p.w, r)
	}
	p.shown = true
}

// signature is what a state shows, but for the ages, which change all the
// time.
func signature(r report) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %d", r.Kind, r.Limit)
	for _, e := range slices.Concat(r.Holders, r.Waiting) {
		fmt.Fprintf(&b, "|%s %s %s %d %q", e.Role, e.Mode, e.Node, e.Token, e.Data)
	}
	return b.String()
}
