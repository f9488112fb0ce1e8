package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// reporter tells, on stderr and one line each, how a job's wait goes:
// connecting (when it takes a while), waiting behind whom (each time the
// holder or the number of waiters ahead changes), the connection lost and
// back, the session expired, acquired (when anything was said before).
// --quiet silences it; errors and the loss of the lock are still reported.
type reporter struct {
	j     *job
	began time.Time
	spoke atomic.Bool
	wg    sync.WaitGroup
}

func (r *reporter) say(format string, args ...any) {
	if r.j.quiet {
		return
	}
	r.spoke.Store(true)
	r.j.warnf(format, args...)
}

// connect is cli.connect, which says why it takes a while; then it says
// that it connected.
func (r *reporter) connect(ctx context.Context) (*zklock.Session, int) {
	s, code, spoke := r.j.connect(ctx, r.j.conn)
	if spoke {
		r.spoke.Store(true)
	}
	if s != nil && r.spoke.Load() {
		r.say("connected (session 0x%x)", s.SessionID())
	}
	return s, code
}

// followSession reports the session's changes of state until it is closed.
func (r *reporter) followSession(s *zklock.Session) {
	events, err := s.Subscribe(context.Background()) // ends with StateClosed
	if err != nil {
		return
	}
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		for ev := range events {
			switch ev.State {
			case zk.StateSuspended:
				r.say("connection to ZooKeeper lost; reconnecting")
			case zk.StateReconnected:
				r.say("reconnected (session 0x%x)", ev.SessionID)
			case zk.StateExpired:
				r.say("session 0x%x expired; its nodes are gone", ev.SessionID)
			case zk.StateConnected:
				r.say("connected with a new session 0x%x", ev.SessionID)
			}
		}
	}()
}

// followQueue reports, while the job waits, who holds the lock and how
// many wait ahead, each time that changes (zklock.WatchLock, as status
// --watch; a failed read is retried silently). stop ends it.
func (r *reporter) followQueue(ctx context.Context, s *zklock.Session) (stop func()) {
	ctx, cancel := context.WithCancel(ctx)
	states, err := watchLock(ctx, s, r.j.path, r.j.kind, func(error) {})
	if err != nil {
		return cancel
	}
	var mu sync.Mutex // a state read before stop must not say "waiting" after "acquired"
	stopped := false
	r.wg.Add(1)
	go func() {
		defer r.wg.Done()
		last := ""
		for st := range states {
			if line := waitLine(newReport(st), s.SessionID()); line != "" && line != last {
				mu.Lock()
				if !stopped {
					r.say("waiting for %s: %s", r.j.path, line)
				}
				mu.Unlock()
				last = line
			}
		}
	}()
	return func() {
		mu.Lock()
		stopped = true
		mu.Unlock()
		cancel()
	}
}

// acquired says so, if anything was said while waiting.
func (r *reporter) acquired(g grant) {
	if r.spoke.Load() {
		r.say("acquired %s after %v (token %d)", r.j.path, time.Since(r.began).Round(time.Millisecond), g.token)
	}
}

// wait waits for the reporter's goroutines; call it after closing the
// session.
func (r *reporter) wait() { r.wg.Wait() }

// waitLine is what a waiter in session sid is behind, or "" when no other
// session holds the lock.
func waitLine(r report, sid int64) string {
	ours := fmt.Sprintf("0x%x", sid)
	var others []entry
	for _, e := range r.Holders {
		if e.Session != ours {
			others = append(others, e)
		}
	}
	if len(others) == 0 {
		return ""
	}
	ahead := 0
	for _, e := range r.Waiting {
		if e.Session == ours {
			break
		}
		ahead++
	}
	who := fmt.Sprintf("held by %s (session %s)", printable(others[0].Data, 40), others[0].Session)
	if others[0].Revoke { // its data is the request now, not the holder's
		who = fmt.Sprintf("held by session %s (revocation requested)", others[0].Session)
	}
	if len(others) > 1 {
		who = fmt.Sprintf("held by %d holders", len(others))
	}
	return fmt.Sprintf("%s, %d waiting ahead", who, ahead)
}
