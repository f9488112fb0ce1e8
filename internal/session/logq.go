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
	// A record of the client's (queueHandler), for its handler; then the
	// fields above are unused.
	h slog.Handler
	r slog.Record
}

func (q *logq) init() { q.wake = make(chan struct{}, 1) }

// add queues a record; it never blocks.
func (q *logq) add(level slog.Level, msg string, args ...any) {
	q.push(logRec{level: level, msg: msg, args: args})
}

func (q *logq) push(rec logRec) {
	q.mu.Lock()
	q.recs = append(q.recs, rec)
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
			if r.h != nil {
				_ = r.h.Handle(context.Background(), r.r)
				continue
			}
			l.Log(context.Background(), r.level, r.msg, r.args...)
		}
	}
}

// queueHandler is the client's slog.Handler: it queues the client's
// records on the Conn's logq for the session's handler, so that a logger
// that blocks holds back none of the client's goroutines either (one of
// them writes every request).
type queueHandler struct {
	q  *logq
	to slog.Handler
}

func (h *queueHandler) Enabled(ctx context.Context, l slog.Level) bool { return h.to.Enabled(ctx, l) }

func (h *queueHandler) Handle(_ context.Context, r slog.Record) error {
	h.q.push(logRec{h: h.to, r: r.Clone()})
	return nil
}

func (h *queueHandler) WithAttrs(as []slog.Attr) slog.Handler {
	return &queueHandler{q: h.q, to: h.to.WithAttrs(as)}
}

func (h *queueHandler) WithGroup(name string) slog.Handler {
	return &queueHandler{q: h.q, to: h.to.WithGroup(name)}
}
