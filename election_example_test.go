package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock"
)

func ExampleElection_Campaign() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	e, err := zklock.NewElection(s, "/services/scheduler/leader")
	if err != nil {
		fmt.Println(err)
		return
	}

	term, err := e.Campaign(ctx, []byte("scheduler-1"))
	if err != nil {
		fmt.Println(err)
		return
	}
	leader, _ := e.Leader(ctx)
	fmt.Printf("%s leads with token > 0: %v\n", leader.Value, term.Token() > 0)

	// Lead until the term ends; here, resign at once.
	select {
	case <-term.Lost():
		fmt.Println("leadership lost:", term.Err())
	default:
		fmt.Println("resigning:", e.Resign(ctx))
	}
	<-term.Lost()
	fmt.Println("term ended:", term.Err())
	_, err = e.Leader(ctx)
	fmt.Println("no leader now:", errors.Is(err, zklock.ErrNoLeader))
	// Output:
	// scheduler-1 leads with token > 0: true
	// resigning: <nil>
	// term ended: zklock: resigned
	// no leader now: true
}

func ExampleElection_Run() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	e, err := zklock.NewElection(s, "/services/indexer/leader")
	if err != nil {
		fmt.Println(err)
		return
	}

	// Lead three terms, then stop. A real leader would work until leaderCtx
	// is cancelled (leadership lost), fencing its writes with t.Token().
	runCtx, stopRunning := context.WithCancel(ctx)
	terms := 0
	err = e.Run(runCtx, []byte("indexer-1"), func(leaderCtx context.Context, t *zklock.Term) error {
		terms++
		fmt.Println("leading term", terms)
		if terms == 3 {
			stopRunning()
		}
		return nil // resign and campaign again
	})
	fmt.Println("Run returned:", err)
	// Output:
	// leading term 1
	// leading term 2
	// leading term 3
	// Run returned: zklock: campaign /services/indexer/leader: context canceled
}

func ExampleElection_Observe() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	candidate, _ := zklock.NewElection(s, "/services/mailer/leader")
	observer, _ := zklock.NewElection(s, "/services/mailer/leader")

	leaders, err := observer.Observe(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	show := func(l zklock.LeaderInfo) {
		if l.Node == "" {
			fmt.Println("no leader")
		} else {
			fmt.Println("leader:", string(l.Value))
		}
	}
	show(<-leaders)
	if _, err := candidate.Campaign(ctx, []byte("mailer-7")); err != nil {
		fmt.Println(err)
		return
	}
	show(<-leaders)
	_ = candidate.Resign(ctx)
	show(<-leaders)
	// Output:
	// no leader
	// leader: mailer-7
	// no leader
}
