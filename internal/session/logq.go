package session

import (
	"context"
	"log/slog"
	"sync"
)

// logq hands log records to a goroutine of their own, in order, so that
// nothing is logged under the Conn's lock: a logger that blocks (a full
// stderr pipe) must never hold back a loss signal or a request.
type logq struct {
	mu   sync.Mutex
	recs []logRec
	wake chan struct{} // has room for one wake-up
}

type logRec struct {
	level slog.Level
	msg   string
	args  []any
}

func (q *logq) init() { q.wake = make(chan struct{}, 1) }

// add queues a record; it never blocks.
func (q *logq) add(level slog.Level, msg string, args ...any) {
	q.mu.Lock()
	q.recs = append(q.recs, logRec{level, msg, args})
	q.mu.Unlock()
	select {
	case q.wake <- struct{}{}:
	default:
	}
}

// run writes the records to l until stop closes, then writes what is left.
func (q *logq) run(l *slog.Logger, stop <-chan struct{}) {
	for {
		select {
		case <-q.wake:
		case <-stop:
			q.flush(l)
			return
		}
		q.flush(l)
	}
}

func (q *logq) flush(l *slog.Logger) {
	for {
		q.mu.Lock()
		recs := q.recs
		q.recs = nil
		q.mu.Unlock()
		if len(recs) == 0 {
			return
		}
		for _, r := range recs {
			l.Log(context.Background(), r.level, r.msg, r.args...)
		}
	}
}
