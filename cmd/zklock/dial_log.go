package main

import (
	"context"
	"log/slog"
	"sync"
)

// attemptFailedMsg is the message of the library's debug record for a
// failed connection attempt, with the attributes "server" and "err" (the
// error, as a value errors.Is and errors.As see through). The session's
// logger is the only place the cause shows before the connect timeout
// ends (NewSession then wraps the last one); TestConnectNamesCause fails if
// the message changes.
const attemptFailedMsg = "zklock: zk: connection attempt failed"

// attempt is one failed connection attempt.
type attempt struct {
	server string
	err    error
}

// dialLog is the slog.Handler the CLI gives its session: it keeps the
// failed connection attempts and drops every other record (the CLI says
// what else happens from the session's events). Handle never blocks: the
// library's log goroutine calls it.
type dialLog struct {
	changed chan struct{} // a value when an attempt was added

	mu      sync.Mutex
	pending []attempt
	latest  attempt
	any     bool
}

// maxPending bounds the attempts kept between two takes.
const maxPending = 16

func newDialLog() *dialLog { return &dialLog{changed: make(chan struct{}, 1)} }

func (l *dialLog) Enabled(_ context.Context, level slog.Level) bool { return level == slog.LevelDebug }

func (l *dialLog) Handle(_ context.Context, r slog.Record) error {
	if r.Message != attemptFailedMsg {
		return nil
	}
	var a attempt
	r.Attrs(func(at slog.Attr) bool {
		switch at.Key {
		case "server":
			a.server = at.Value.String()
		case "err":
			a.err, _ = at.Value.Any().(error)
		}
		return true
	})
	if a.err == nil {
		return nil
	}
	l.mu.Lock()
	if len(l.pending) < maxPending {
		l.pending = append(l.pending, a)
	}
	l.latest, l.any = a, true
	l.mu.Unlock()
	select {
	case l.changed <- struct{}{}:
	default:
	}
	return nil
}

func (l *dialLog) WithAttrs([]slog.Attr) slog.Handler { return l }
func (l *dialLog) WithGroup(string) slog.Handler      { return l }

// take returns the attempts added since the last take.
func (l *dialLog) take() []attempt {
	l.mu.Lock()
	defer l.mu.Unlock()
	p := l.pending
	l.pending = nil
	return p
}

// last returns the latest failed attempt, if any.
func (l *dialLog) last() (attempt, bool) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.latest, l.any
}
