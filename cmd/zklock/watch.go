package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/internal/queue"
)

// watchRetry is how long --watch waits before it lists again after a
// failed listing, unless the session reports a change of state first.
const watchRetry = time.Second

// maxWatchedHolders bounds the data watches on holders' nodes (a semaphore
// of a thousand slots would otherwise set a thousand).
const maxWatchedHolders = 32

// watchStatus is 'zklock status --watch': it prints the state of path, then
// each new state, until a signal.
func (c *cli) watchStatus(ctx context.Context, s *zklock.Session, path, kind string, asJSON bool) int {
	if err := checkPath(s, path); err != nil {
		return c.opFailed(err)
	}
	events, err := s.Subscribe(ctx)
	if err != nil {
		return c.opFailed(err)
	}
	w := &watcher{s: s, path: path, kind: kind, armed: map[string]*zklock.Watch{}}
	out := &statusPrinter{w: c.stdout, asJSON: asJSON, tty: !asJSON && isTerminal(c.stdout)}
	lastErr := ""
	for {
		var r report
		var err error
		if !within(ctx, s, func() { r, err = w.refresh(ctx) }) {
			break
		}
		retry := time.Duration(0)
		switch {
		case err != nil && ctx.Err() == nil:
			if msg := oneLine(err.Error()); msg != lastErr {
				c.warnf("cannot list %s: %s; trying again", path, msg)
				lastErr = msg
			}
			retry = watchRetry
		case err == nil:
			lastErr = ""
			out.show(r)
		}
		if !w.wait(ctx, events, retry) {
			break
		}
	}
	if _, ok := interrupted(ctx); ok {
		return exitOK
	}
	return c.failf(exitError, "", "watching %s: the session ended", path)
}

// watcher keeps one ZooKeeper watch on everything the status of path shows:
// the path itself (created, deleted, its data: a semaphore's limit), its
// children, a semaphore's leases and queue, and the holders' nodes (their
// data). Each is set once and again only after it fired: a watch no longer
// needed stays registered until its node changes, its one event unread.
type watcher struct {
	s     *zklock.Session
	path  string
	kind  string // "" detects it on each listing
	armed map[string]*zklock.Watch
	dirty bool // a holder changed between the listing and its watch
}

// refresh sets the watches on the path first, then lists it: a change after
// the watches were set fires one, so none is missed between the listing and
// the wait.
func (w *watcher) refresh(ctx context.Context) (report, error) {
	conn := w.s.Client()
	if err := w.armPath(ctx, conn); err != nil {
		return report{}, err
	}
	r, err := list(ctx, w.s, w.path, w.kind)
	if err != nil {
		return r, err
	}
	return r, w.armHolders(ctx, conn, r)
}

func (w *watcher) armPath(ctx context.Context, conn *zklock.Client) error {
	if _, ok := w.armed["exists:"+w.path]; !ok {
		_, _, ch, err := conn.ExistsW(ctx, w.path)
		if err != nil {
			return err
		}
		w.armed["exists:"+w.path] = ch
	}
	for _, p := range []string{w.path, join(w.path, queue.LeasesChild), join(w.path, queue.LocksChild)} {
		if _, ok := w.armed["children:"+p]; ok {
			continue
		}
		_, _, ch, err := conn.ChildrenW(ctx, p)
		switch {
		case errors.Is(err, zklock.ErrNoNode):
			// Its creation changes the children of its parent, or creates
			// the path: both watched already.
		case err != nil:
			return err
		default:
			w.armed["children:"+p] = ch
		}
	}
	return nil
}

// armHolders watches the data of the holders' nodes. A holder whose node is
// gone, or whose data changed, since the listing makes the next wait return
// at once.
func (w *watcher) armHolders(ctx context.Context, conn *zklock.Client, r report) error {
	holders := map[string]entry{}
	for _, e := range r.Holders[:min(len(r.Holders), maxWatchedHolders)] {
		holders["data:"+e.Node] = e
	}
	for k := range w.armed {
		if _, ok := holders[k]; strings.HasPrefix(k, "data:") && !ok {
			delete(w.armed, k)
		}
	}
	w.dirty = false
	for k, e := range holders {
		if _, ok := w.armed[k]; ok {
			continue
		}
		data, _, ch, err := conn.GetW(ctx, e.Node)
		switch {
		case errors.Is(err, zklock.ErrNoNode):
			w.dirty = true
		case err != nil:
			return err
		default:
			w.armed[k] = ch
			w.dirty = w.dirty || string(queue.UserData(data)) != e.Data
		}
	}
	return nil
}

// wait returns true when a watch fired, the session changed state (after a
// reconnect a restored watch is not trusted alone, and after an expiry the
// old session's are gone: every watch is set again), or retry (if not 0)
// passed; false when ctx ended or the session was closed.
func (w *watcher) wait(ctx context.Context, events <-chan zklock.Event, retry time.Duration) bool {
	if w.dirty {
		return ctx.Err() == nil
	}
	cases := []reflect.SelectCase{
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ctx.Done())},
		{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(events)},
	}
	if retry > 0 {
		t := time.NewTimer(retry)
		defer t.Stop()
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(t.C)})
	}
	base := len(cases)
	keys := make([]string, 0, len(w.armed))
	for k, ch := range w.armed {
		keys = append(keys, k)
		cases = append(cases, reflect.SelectCase{Dir: reflect.SelectRecv, Chan: reflect.ValueOf(ch.Done())})
	}
	i, _, ok := reflect.Select(cases)
	switch {
	case i == 0 || (i == 1 && !ok):
		return false
	case i == 1:
		clear(w.armed)
	case i >= base:
		delete(w.armed, keys[i-base])
	}
	// Every watch that fired meanwhile is covered by the one listing.
	for k, ch := range w.armed {
		select {
		case <-ch.Done():
			delete(w.armed, k)
		default:
		}
	}
	return true
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
			Time time.Time `json:"time"`
			report
		}{now, r})
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
