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
		r.say("connected (session 0x%x)", s.Client().SessionID())
	}
	return s, code
}

// followSession reports the session's changes of state until it is closed.
func (r *reporter) followSession(s *zklock.Session) {
	events, err := s.Client().Subscribe(context.Background()) // ends with StateClosed
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
	states, err := zklock.WatchLock(ctx, s, r.j.path)
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
			if st.Err != nil {
				continue // WatchLock reads again
			}
			if line := r.j.waitLine(newReport(st), s.Client().SessionID()); line != "" && line != last {
				mu.Lock()
				if !stopped {
					r.say("%s: %s", r.j.waiting(), line)
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
	if !r.spoke.Load() {
		return
	}
	took := time.Since(r.began).Round(time.Millisecond)
	if r.j.elect {
		r.say("elected leader of %s after %v (token %d)", r.j.path, took, g.token)
		return
	}
	r.say("acquired %s after %v (token %d)", r.j.path, took, g.token)
}

// wait waits for the reporter's goroutines; call it after closing the
// session.
func (r *reporter) wait() { r.wg.Wait() }

// waiting is what the job does while it waits.
func (j *job) waiting() string {
	if j.elect {
		return "waiting to lead " + j.path
	}
	return "waiting for " + j.path
}

// heldBy is the verb of a holder: a lock's, or an election's leader's.
func (j *job) heldBy() string {
	if j.elect {
		return "led by"
	}
	return "held by"
}

// waitLine is what a waiter in session sid is behind, in the job's words
// (an election has a leader and candidates), or "" when no other session
// holds it.
func (j *job) waitLine(r report, sid int64) string {
	if !j.elect {
		return waitLine(r, sid)
	}
	holder, ahead := waitParts(r, sid)
	if holder == nil {
		return ""
	}
	who := fmt.Sprintf("led by %s (session %s)", printable(holder.Data, 40), holder.Session)
	if holder.Revoke { // its value is the request now, as status says
		who = fmt.Sprintf("led by session %s (revocation requested)", holder.Session)
	}
	if ahead == 1 {
		return who + ", 1 candidate ahead"
	}
	return fmt.Sprintf("%s, %d candidates ahead", who, ahead)
}

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
	_, ahead := waitParts(r, sid)
	who := fmt.Sprintf("held by %s (session %s)", printable(others[0].Data, 40), others[0].Session)
	if others[0].Revoke { // its data is the request now, not the holder's
		who = fmt.Sprintf("held by session %s (revocation requested)", others[0].Session)
	}
	if len(others) > 1 {
		who = fmt.Sprintf("held by %d holders", len(others))
	}
	return fmt.Sprintf("%s, %d waiting ahead", who, ahead)
}

// waitParts returns the first holder of another session than sid (nil if
// none) and how many wait ahead of sid.
func waitParts(r report, sid int64) (holder *entry, ahead int) {
	ours := fmt.Sprintf("0x%x", sid)
	for i, e := range r.Holders {
		if e.Session != ours {
			holder = &r.Holders[i]
			break
		}
	}
	for _, e := range r.Waiting {
		if e.Session == ours {
			break
		}
		ahead++
	}
	return holder, ahead
}
