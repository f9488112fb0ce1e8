package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"golang.org/x/sys/unix"
)

// forwarded are the signals zklock catches: while it waits for a lock they
// make it give up (and leave nothing behind); while the command runs they
// are passed on to it, as are SIGTSTP and SIGCONT (see supervise).
var forwarded = []os.Signal{syscall.SIGINT, syscall.SIGTERM, syscall.SIGHUP,
	syscall.SIGQUIT, syscall.SIGUSR1, syscall.SIGUSR2}

// signalCause is the cause of a context cancelled by a signal.
type signalCause struct{ sig os.Signal }

// Error names the signal as kill(1) does: "interrupted by SIGINT" (its
// String, "interrupt", made "interrupted by interrupt").
func (c signalCause) Error() string {
	if s, ok := c.sig.(syscall.Signal); ok && unix.SignalName(s) != "" {
		return "interrupted by " + unix.SignalName(s)
	}
	return "interrupted by " + c.sig.String()
}

// exitCode is the conventional code of a process ended by the signal.
func (c signalCause) exitCode() int {
	if s, ok := c.sig.(syscall.Signal); ok {
		return exitSignal + int(s)
	}
	return exitSignal
}

// interrupted returns the signal that cancelled ctx, if one did.
func interrupted(ctx context.Context) (signalCause, bool) {
	c, ok := context.Cause(ctx).(signalCause)
	return c, ok
}

// catchSignals starts catching the forwarded signals; stop undoes it.
func catchSignals() (ch chan os.Signal, stop func()) {
	ch = make(chan os.Signal, 8)
	signal.Notify(ch, forwarded...)
	return ch, func() { signal.Stop(ch) }
}

// cancelOnSignal returns a context that is cancelled, with a signalCause,
// when a signal arrives on ch. Call release to stop watching ch (so that a
// later reader gets the signals) before reading ch elsewhere.
func cancelOnSignal(ctx context.Context, ch <-chan os.Signal) (context.Context, func()) {
	ctx, cancel := context.WithCancelCause(ctx)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		select {
		case sig := <-ch:
			cancel(signalCause{sig})
		case <-quit:
		}
	}()
	return ctx, func() {
		close(quit)
		<-done
	}
}
