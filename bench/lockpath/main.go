// Command lockpath measures the code an uncontended Mutex.Lock runs: the
// files and functions of zklock it executes and the go statements it
// reaches, from coverage counters written just before and just after one
// Lock on a path that exists (after a first Lock and Unlock made it).
//
// Run it with make lock-path, which builds it with coverage of zklock's
// packages; it starts a throwaway ZooKeeper unless ZK_SERVERS is set.
// The client (the wire layer) is counted apart: what Lock runs above it is
// the figure. Background goroutines (the client's pings, the session's heartbeat) can
// add a function that ran meanwhile: -repeat takes, of several runs, the
// functions every run executed.
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime/coverage"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zktest"
)

func main() {
	repeat := flag.Int("repeat", 5, "runs whose common functions are reported")
	cancellable := flag.Bool("cancellable", false, "lock with a ctx that can be cancelled (default: context.Background())")
	module := flag.String("module", "github.com/zklock/zklock/", "import path prefix of the code measured")
	srcRoot := flag.String("src", "..", "the module's directory, to map counters to functions")
	below := flag.String("below", "internal/client/,internal/wire/", "directories of the wire layer, counted apart (comma-separated)")
	flag.Parse()
	if err := run(*repeat, *cancellable, *module, *srcRoot, strings.Split(*below, ",")); err != nil {
		fmt.Fprintln(os.Stderr, "lockpath:", err)
		os.Exit(1)
	}
}

func run(repeat int, cancellable bool, module, srcRoot string, below []string) error {
	servers := os.Getenv("ZK_SERVERS")
	if servers == "" {
		zk, err := zktest.Launch(context.Background(), 1)
		if err != nil {
			return err
		}
		defer zk.Close()
		servers = zk.Servers()[0]
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(servers), zklock.WithSessionTimeout(30*time.Second))
	if err != nil {
		return err
	}
	defer s.Close()
	funcs, err := parseFuncs(srcRoot, module)
	if err != nil {
		return err
	}
	var common *path
	for i := range repeat {
		p, err := measure(s, fmt.Sprintf("/lockpath/run-%d", i), cancellable, funcs)
		if err != nil {
			return err
		}
		common = p.intersect(common)
	}
	common.print(os.Stdout, cancellable, below)
	return nil
}

// measure runs one Lock on path (made by a Lock and Unlock before) between
// two snapshots of the coverage counters.
func measure(s *zklock.Session, lockPath string, cancellable bool, funcs *funcIndex) (*path, error) {
	m, err := zklock.NewMutex(s, lockPath)
	if err != nil {
		return nil, err
	}
	bg := context.Background()
	if err := m.Lock(bg); err != nil {
		return nil, err
	}
	if err := m.Unlock(bg); err != nil {
		return nil, err
	}
	lockCtx := bg
	if cancellable {
		c, cancel := context.WithCancel(bg)
		defer cancel()
		lockCtx = c
	}
	before, err := snapshot()
	if err != nil {
		return nil, err
	}
	if err := m.Lock(lockCtx); err != nil {
		return nil, err
	}
	after, err := snapshot()
	if err != nil {
		return nil, err
	}
	if err := m.Unlock(bg); err != nil {
		return nil, err
	}
	return funcs.ran(before, after), nil
}

// snapshot writes the coverage counters to a fresh directory and reads
// them back as counts per block.
func snapshot() (counts, error) {
	dir, err := os.MkdirTemp("", "lockpath-")
	if err != nil {
		return nil, err
	}
	defer os.RemoveAll(dir)
	if err := coverage.WriteMetaDir(dir); err != nil {
		return nil, fmt.Errorf("%w (build with -cover: make lock-path)", err)
	}
	if err := coverage.WriteCountersDir(dir); err != nil {
		return nil, err
	}
	return readCounts(dir)
}
