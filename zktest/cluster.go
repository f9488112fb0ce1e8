package zktest

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"
)

// failLogLines is how much of each server's log a failed test prints.
const failLogLines = 60

// Cluster is a ZooKeeper standalone server or ensemble for one test. Start
// and StartEnsemble return one that is serving, and t.Cleanup tears it down.
// Its methods are safe for concurrent use; it must not be copied.
type Cluster struct {
	t        testing.TB
	opts     options
	servers  []*Server
	external bool
	source   string    // where the servers come from, for logs
	tls      *tlsFiles // WithSelfSignedTLS: the servers' TLS material
	peers    *peerNet  // WithPeerNetwork: proxies between the servers
	ports    *portSet  // the servers' ports, reserved until cleanup

	mu      sync.Mutex
	startup time.Duration
}

// Start starts a standalone ZooKeeper server for t and waits until it serves.
// It fails the test (t.Fatal, never Skip) when no ZooKeeper can be found;
// see the package documentation for where one is looked for.
func Start(t testing.TB, opts ...Option) *Cluster {
	t.Helper()
	return start(t, 1, opts)
}

// StartEnsemble starts an ensemble of n servers on 127.0.0.1, in parallel,
// and waits until every one serves and one is leader. n is usually 3 or 5;
// n == 1 is the same as Start. Ensembles need a local installation (or
// ZKTEST_SERVERS listing exactly n servers): the Docker fallback
// (zktest/docker) runs only standalone servers.
func StartEnsemble(t testing.TB, n int, opts ...Option) *Cluster {
	t.Helper()
	if n < 1 {
		t.Fatalf("zktest: ensemble of %d servers", n)
	}
	return start(t, n, opts)
}

func start(t testing.TB, n int, opts []Option) *Cluster {
	t.Helper()
	o, err := buildOptionsFor(n, opts)
	if err != nil {
		t.Fatal(err)
	}
	if env := os.Getenv(EnvServers); env != "" {
		if o.tls {
			t.Fatalf("zktest: WithSelfSignedTLS needs a local installation; unset %s", EnvServers)
		}
		return startExternal(t, n, o, env)
	}
	in, localErr := findInstall()
	if localErr == nil {
		return startLocal(t, in, n, o)
	}
	if o.tls {
		t.Fatalf("zktest: WithSelfSignedTLS needs a local installation (%v).\n%s", localErr, installHelp)
	}
	return startFallback(t, n, o, localErr)
}

// Servers returns the client address ("127.0.0.1:port") of every server, in
// server order.
func (c *Cluster) Servers() []string {
	addrs := make([]string, len(c.servers))
	for i, s := range c.servers {
		addrs[i] = s.addr
	}
	return addrs
}

// ConnectString returns Servers joined with commas, ZooKeeper's usual form.
func (c *Cluster) ConnectString() string { return strings.Join(c.Servers(), ",") }

// Len returns the number of servers.
func (c *Cluster) Len() int { return len(c.servers) }

// Server returns server i (0-based, in the order of Servers). It panics if i
// is out of range, like a slice index.
func (c *Cluster) Server(i int) *Server { return c.servers[i] }

// TickTime returns the servers' tickTime.
func (c *Cluster) TickTime() time.Duration { return c.opts.tickTime }

// MinSessionTimeout returns the shortest session timeout the servers grant.
func (c *Cluster) MinSessionTimeout() time.Duration { return c.opts.minSession }

// SyncLimit returns the ensemble's syncLimit in ticks (see WithSyncLimit).
func (c *Cluster) SyncLimit() int { return c.opts.syncLimit }

// MaxSessionTimeout returns the longest session timeout the servers grant; a
// client asking for more gets this.
func (c *Cluster) MaxSessionTimeout() time.Duration { return c.opts.maxSession }

// External reports whether the servers come from ZKTEST_SERVERS. Their
// fault-injection methods (Stop, Kill, Pause...) then return ErrUnmanaged.
func (c *Cluster) External() bool { return c.external }

// StartupTime returns how long Start or StartEnsemble took to get every
// server serving, from launching the first JVM (or container) to the ensemble
// having a leader. It is zero for an external cluster.
func (c *Cluster) StartupTime() time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.startup
}

func (c *Cluster) setStartupTime(d time.Duration) {
	c.mu.Lock()
	c.startup = d
	c.mu.Unlock()
}

// cleanup stops every server; when the test failed it first shows the tail
// of each server's log, which is usually where the reason is.
func (c *Cluster) cleanup() {
	var wg sync.WaitGroup
	errs := make([]error, len(c.servers))
	// How a server that was not running at the end had exited: by a fault
	// the test injected, or by itself (a log tail alone may not say).
	gone := make([]string, len(c.servers))
	for i, s := range c.servers {
		if dead, status := s.ctl.exited(); dead {
			gone[i] = fmt.Sprintf("; not running at the end, its last exit: %s", status)
		}
	}
	for i, s := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = s.ctl.teardown()
		}()
	}
	wg.Wait()
	c.ports.release()
	if c.peers != nil {
		c.peers.close()
	}
	for i, err := range errs {
		if err != nil {
			c.t.Errorf("zktest: tear down server %d: %v", i, err)
		}
	}
	if c.t.Failed() && c.opts.keepDir != "" {
		for i, s := range c.servers {
			if err := s.ctl.keep(c.opts.keepDir); err != nil {
				c.t.Errorf("zktest: keep server %d: %v", i, err)
			}
		}
		c.t.Logf("zktest: the servers' directories are kept in %s", c.opts.keepDir)
	}
	if c.t.Failed() && !c.external {
		for i, s := range c.servers {
			c.t.Logf("zktest: last %d lines of the log of server %d (%s, from %s%s):\n%s",
				failLogLines, i, s.addr, c.source, gone[i], s.ctl.logTail(failLogLines))
		}
	}
}

// boundedCtx returns ctx with a deadline of at most d from now.
func boundedCtx(ctx context.Context, d time.Duration) (context.Context, context.CancelFunc) {
	if dl, ok := ctx.Deadline(); ok && time.Until(dl) <= d {
		return context.WithCancel(ctx)
	}
	return context.WithTimeout(ctx, d)
}
