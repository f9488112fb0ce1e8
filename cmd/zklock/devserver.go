package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock/zktest"
)

type devFlags struct {
	size       int
	maxSession time.Duration
}

func (f *devFlags) register(fs *flag.FlagSet) {
	fs.IntVar(&f.size, "size", 1, "how many servers: 1 for a standalone server, 3 or 5 for an ensemble")
	fs.DurationVar(&f.maxSession, "max-session-timeout", time.Minute, "longest session timeout the servers grant")
}

// devServer is 'zklock dev-server': a throwaway ZooKeeper on 127.0.0.1,
// from the local installation (as package zktest finds it), until a signal.
// It ignores ZKTEST_SERVERS, which would make zktest use those servers
// instead, and prints ZK_SERVERS=..., the variable the CLI reads.
func (c *cli) devServer(args []string) int {
	var f devFlags
	fs := c.newFlagSet()
	f.register(fs)
	if oldSizeFlag(args) {
		return c.usagef("dev-server's -n is now --size, the number of servers (-n is the limit of run's semaphore)")
	}
	if _, _, code, ok := c.parseArgs(fs, args, nil, false); !ok {
		return code
	}
	switch {
	case f.size < 1 || f.size > 9:
		return c.usagef("--size %d: want 1 to 9 servers", f.size)
	case f.maxSession < 200*time.Millisecond:
		return c.usagef("--max-session-timeout %v: want at least 200ms", f.maxSession)
	}
	os.Unsetenv(zktest.EnvServers)
	sigs, stop := catchSignals()
	defer stop()
	ctx, unwatch := cancelOnSignal(context.Background(), sigs)
	defer unwatch()
	cluster, err := zktest.Launch(ctx, f.size, zktest.WithSessionTimeouts(200*time.Millisecond, f.maxSession))
	if sc, ok := interrupted(ctx); ok {
		return sc.exitCode()
	}
	if err != nil {
		return c.failf(exitError, "it needs a local ZooKeeper (Debian: apt-get install zookeeper)", "%v", err)
	}
	fmt.Fprintf(c.stdout, "%s=%s\n", envServers, cluster.ConnectString())
	c.warnf("%d server(s) up in %v; press Ctrl-C to stop them and remove their data",
		f.size, cluster.StartupTime().Round(time.Millisecond))
	<-ctx.Done()
	if err := cluster.Close(); err != nil {
		return c.failf(exitError, "", "stopping: %v", err)
	}
	return exitOK
}

// oldSizeFlag reports whether args use dev-server's former -n.
func oldSizeFlag(args []string) bool {
	for _, a := range args {
		if a == "--" {
			return false
		}
		if name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "="); name == "n" && strings.HasPrefix(a, "-") {
			return true
		}
	}
	return false
}
