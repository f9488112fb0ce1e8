package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

func ExampleSemaphore() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// At most 3 concurrent crawlers, whatever the number of processes.
	sem, err := zklock.NewSemaphore(s, "/crawl/slots", 3)
	if err != nil {
		fmt.Println(err)
		return
	}
	big, err := sem.Acquire(ctx, 2) // two slots, together or not at all
	if err != nil {
		fmt.Println(err)
		return
	}
	small, _ := sem.Acquire(ctx, 1)
	_, err = sem.TryAcquire(ctx, 1)
	fmt.Println("full:", errors.Is(err, zklock.ErrLocked))
	holders, _ := zklock.Contenders(ctx, s, "/crawl/slots") // the three leases hold; nobody waits
	fmt.Println("lease nodes:", len(holders))

	// Every process must agree on the limit.
	other, _ := zklock.NewSemaphore(s, "/crawl/slots", 5)
	_, err = other.Acquire(ctx, 1)
	fmt.Println("limit mismatch:", errors.Is(err, zklock.ErrInvalidArgument))

	fmt.Println(big.Release(ctx), small.Release(ctx))
	fmt.Println("twice:", small.Release(ctx))
	// Output:
	// full: true
	// lease nodes: 3
	// limit mismatch: true
	// <nil> <nil>
	// twice: zklock: lease already released
}

func ExampleLease() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	sem, _ := zklock.NewSemaphore(s, "/jobs/slots", 1)
	lease, err := sem.Acquire(ctx, 1)
	if err != nil {
		fmt.Println(err)
		return
	}

	// Work only while the lease holds, and write to ZooKeeper only with the
	// lease's guard in the same multi-op.
	select {
	case <-lease.Lost():
		fmt.Println("lost: stop working")
	default:
		_, err := s.Client().Multi(ctx, append(lease.Guard(),
			&zk.CreateOp{Path: "/jobs/result", Data: []byte("done"), ACL: zk.WorldACL(zk.PermAll)})...)
		fmt.Println("guarded write:", err)
	}
	fmt.Println("release:", lease.Release(ctx))
	_, err = s.Client().Multi(ctx, &zk.CheckOp{Path: "/jobs/result", Version: 0})
	fmt.Println("result stays:", err)
	// Output:
	// guarded write: <nil>
	// release: <nil>
	// result stays: <nil>
}
