package main

import (
	"regexp"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest"
)

// Adversarial review of issue 38 item 3, through the CLI: a run waiting for
// a slot of a queue-layout semaphore follows the queue with WatchLock on
// its own session (reporter.followQueue). ZooKeeper 3.8 keeps one watch
// mode per session and path in each of its two watch tables: a getData or
// getChildren watch set on the semaphore's path after the session's
// addWatch there turns the persistent recursive watch into a standard one,
// and the waiter no longer hears of the deletion of a node WatchLock does
// not watch (a waiter's). WatchLock's first watches come before the
// addWatch (harmless); but after a reconnect the client restores them all
// (the recursive one last) and WatchLock, woken by the state change, sets
// its watches on the path again, after it.
//
// Limit 1: a holds, b and then c wait; c's connection is reset (same
// session); b gives up; a ends. The slot is free and c is first in line.
func TestReviewRunQueueSemaphoreWaiterAheadLeaves(t *testing.T) {
	t.Parallel()
	c := shared(t)
	servers := c.ConnectString()
	px := zktest.NewProxy(t, c.Servers())
	sem := lockPath(t, "semq")
	a := holdLock(t, servers, sem, "-n", "1", "--queue", "--data", "a")
	b := start(t, servers, "run", "-n", "1", "--queue", "--data", "b", sem, "--", "true")
	awaitQueue(t, servers, sem, 1, 1)
	w := start(t, "", "run", "--servers", strings.Join(px.Addrs(), ","), "--session-timeout", "10s",
		"-n", "1", "--queue", "--data", "c", sem, "--", "true")
	awaitQueue(t, servers, sem, 1, 2)
	eventually(t, 30*time.Second, "c reports its wait", func() bool {
		return strings.Contains(w.errOut.String(), "waiting for")
	})
	px.Reset()
	eventually(t, 30*time.Second, "c reconnected", func() bool {
		return regexp.MustCompile(`(?m)^zklock run: reconnected`).MatchString(w.errOut.String())
	})
	b.signal(t, syscall.SIGTERM) // the waiter ahead of c gives up
	b.wait(t, procTimeout)
	awaitQueue(t, servers, sem, 1, 1)
	a.signal(t, syscall.SIGTERM)
	a.wait(t, procTimeout)
	select {
	case <-w.done:
	case <-time.After(20 * time.Second):
		t.Fatalf("the last waiter still waits 20s after the slot was freed; the path: %+v; its stderr:\n%s",
			statusOf(t, servers, sem), w.errOut.String())
	}
	if code := w.wait(t, procTimeout); code != 0 {
		t.Fatalf("the last waiter: exit %d; stderr: %s", code, w.errOut.String())
	}
}
