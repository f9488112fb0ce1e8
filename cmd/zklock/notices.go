package main

import (
	"io"
	"time"
)

// notices is where a job writes its reports: a queue in front of stderr,
// written by a goroutine of its own, so that a stderr that blocks (a full
// pipe nobody reads) never delays a signal to the command. A report that
// does not fit in the queue is dropped. Writes to a stderr that fails (a
// pipe whose reader is gone: zklock catches SIGPIPE while a job runs) are
// dropped too.
type notices struct {
	lines chan []byte
	done  chan struct{}
}

// noticeQueue is how many reports may wait for stderr.
const noticeQueue = 64

func newNotices(w io.Writer) *notices {
	n := &notices{lines: make(chan []byte, noticeQueue), done: make(chan struct{})}
	go func() {
		defer close(n.done)
		for b := range n.lines {
			_, _ = w.Write(b)
		}
	}()
	return n
}

// Write queues p, or drops it if the queue is full; it never blocks.
func (n *notices) Write(p []byte) (int, error) {
	select {
	case n.lines <- append([]byte(nil), p...):
	default:
	}
	return len(p), nil
}

// close lets the queued reports out, waiting at most d for a stderr that
// does not take them.
func (n *notices) close(d time.Duration) {
	close(n.lines)
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-n.done:
	case <-t.C:
	}
}
