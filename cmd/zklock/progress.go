package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"time"
)

const (
	progressAfter = 2 * time.Second // waits shorter than this stay silent
	progressEvery = time.Second
)

// startProgress shows, on a terminal only, a line that says how long we
// have been waiting for path and what is ahead of us, rewritten in place
// every second once the wait has lasted progressAfter. stop erases it.
func startProgress(ctx context.Context, w io.Writer, path string, describe func(context.Context) string) (stop func()) {
	if !isTerminal(w) {
		return func() {}
	}
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(done)
		began, shown := time.Now(), false
		t := time.NewTimer(progressAfter)
		defer t.Stop()
		for {
			select {
			case <-t.C:
			case <-quit:
				if shown {
					fmt.Fprint(w, "\r\033[K")
				}
				return
			}
			lctx, cancel := context.WithTimeout(ctx, progressEvery)
			fmt.Fprintf(w, "\r\033[Kzklock: waiting for %s for %v: %s", path,
				time.Since(began).Round(time.Second), describe(lctx))
			cancel()
			shown = true
			t.Reset(progressEvery)
		}
	}()
	return func() {
		close(quit)
		<-done
	}
}

// isTerminal reports whether w is a terminal (or another character device,
// such as /dev/null, where the progress line does no harm either).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
