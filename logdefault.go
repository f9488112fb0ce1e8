package zklock

import (
	"context"
	"log/slog"
)

// warnDefault is the session's logger when WithLogger is not given: it
// passes warnings and errors (a connect that keeps failing, a lock lost)
// to slog.Default(), looked up at each record so that a later
// slog.SetDefault applies, and drops the rest. A program that set no
// logger still sees why NewSession has not returned (through the log
// package, on stderr, unless it changed that), and nothing chattier.
type warnDefault struct {
	with []func(slog.Handler) slog.Handler // WithAttrs and WithGroup, in order
}

func (h warnDefault) handler() slog.Handler {
	to := slog.Default().Handler()
	for _, w := range h.with {
		to = w(to)
	}
	return to
}

func (h warnDefault) Enabled(ctx context.Context, l slog.Level) bool {
	return l >= slog.LevelWarn && slog.Default().Enabled(ctx, l)
}

func (h warnDefault) Handle(ctx context.Context, r slog.Record) error {
	if r.Level < slog.LevelWarn {
		return nil
	}
	return h.handler().Handle(ctx, r)
}

func (h warnDefault) WithAttrs(as []slog.Attr) slog.Handler {
	return h.and(func(to slog.Handler) slog.Handler { return to.WithAttrs(as) })
}

func (h warnDefault) WithGroup(name string) slog.Handler {
	return h.and(func(to slog.Handler) slog.Handler { return to.WithGroup(name) })
}

func (h warnDefault) and(w func(slog.Handler) slog.Handler) warnDefault {
	return warnDefault{with: append(h.with[:len(h.with):len(h.with)], w)}
}
