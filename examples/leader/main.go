// Command leader shows leader election surviving the death of its leader.
//
// It starts three candidate processes (itself, re-executed) that campaign on
// one election path, watches the election, and SIGKILLs each new leader's
// process until one candidate is left. Every term is printed with its
// fencing token: the candidates print the terms they lead, the watcher the
// leaders it sees. A killed leader's session lingers on the server until it
// times out, so the next candidate takes over after about one session
// timeout.
//
// Servers come from ZK_SERVERS (host:port,...). Without it, a throwaway
// standalone ZooKeeper is started with zktest.Launch, from the local
// installation the tests use, and removed at the end.
//
//	go run ./examples/leader
package main

import (
	"context"
	"fmt"
	"log"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock"
)

const (
	electionPath   = "/zklock-example/leader"
	sessionTimeout = 4 * time.Second
	candidates     = 3
)

func main() {
	log.SetFlags(0)
	if len(os.Args) == 3 && os.Args[1] == "candidate" {
		if err := campaign(os.Args[2]); err != nil {
			log.Fatalf("%s: %v", os.Args[2], err)
		}
		return
	}
	if err := run(); err != nil {
		log.Fatal(err)
	}
}

// connect opens a session on the servers in ZK_SERVERS.
func connect(ctx context.Context) (*zklock.Session, error) {
	return zklock.NewSession(ctx,
		zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...),
		zklock.WithSessionTimeout(sessionTimeout))
}

// campaign is a candidate process: it leads whenever elected, until SIGTERM.
func campaign(name string) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, os.Interrupt)
	defer stop()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go exitWithParent(cancel)
	s, err := connect(ctx)
	if err != nil {
		return err
	}
	defer s.Close()
	e, err := zklock.NewElection(s, electionPath)
	if err != nil {
		return err
	}
	value := fmt.Sprintf("%s pid=%d", name, os.Getpid())
	err = e.Run(ctx, []byte(value), func(lctx context.Context, t *zklock.Term) error {
		fmt.Printf("  %s: I lead, token %#x\n", name, t.Token())
		<-lctx.Done() // a real leader would do its work here, fenced by t.Token()
		fmt.Printf("  %s: my term ended: %v\n", name, context.Cause(lctx))
		return nil
	})
	if ctx.Err() != nil {
		return nil // told to stop
	}
	return err
}
