package zklock_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

// exampleServer starts a standalone ZooKeeper (or uses ZK_SERVERS) for one
// example and returns its addresses and a function that stops it and
// removes its files. A failure to start ends the test binary: an example
// has no *testing.T to fail.
func exampleServer() ([]string, func()) {
	c, err := zktest.Launch(context.Background(), 1)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return c.Servers(), func() {
		if err := c.Close(); err != nil {
			fmt.Fprintln(os.Stderr, err)
		}
	}
}

// exampleSession starts a throwaway ZooKeeper and opens a session on it, so
// that each example shows only its own primitive (ExampleMutex_Lock shows
// the set-up in full). done closes the session and stops the server.
func exampleSession() (context.Context, *zklock.Session, func()) {
	servers, stop := exampleServer()
	ctx, s, done := openSession(servers)
	return ctx, s, func() {
		done()
		stop()
	}
}

// shared is one throwaway ZooKeeper for the examples that need no server of
// their own, started on first use and stopped by TestMain.
var shared struct {
	once    sync.Once
	servers []string
	stop    func()
}

// sharedServers returns the shared ZooKeeper's addresses.
func sharedServers() []string {
	shared.once.Do(func() { shared.servers, shared.stop = exampleServer() })
	return shared.servers
}

// stopSharedServer stops the shared ZooKeeper, if it was started.
func stopSharedServer() {
	if shared.stop != nil {
		shared.stop()
	}
}

// sharedSession opens a session on the shared ZooKeeper; done closes it.
func sharedSession() (context.Context, *zklock.Session, func()) {
	return openSession(sharedServers())
}

// openSession opens a session on servers with a minute's ctx; done closes
// both. A failure ends the test binary: an example has no *testing.T.
func openSession(servers []string) (context.Context, *zklock.Session, func()) {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	s, err := zklock.NewSession(ctx, zklock.WithServers(servers...))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	return ctx, s, func() {
		s.Close()
		cancel()
	}
}
