package zklock_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock"
)

// WatchLock shows who holds a lock and who waits, at once and on each
// change, without queuing for it (what `zklock status --watch` prints).
func ExampleWatchLock() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop() // ends the watch and closes states
	states, err := zklock.WatchLock(ctx, s, "/jobs/nightly")
	if err != nil {
		fmt.Println(err)
		return
	}
	show := func(st zklock.LockState) {
		if len(st.Holders) == 0 {
			fmt.Println("free")
			return
		}
		fmt.Printf("%s held by %s, %d waiting\n", st.Kind, st.Holders[0].Data, len(st.Waiting))
	}
	show(<-states)

	a, _ := zklock.NewMutex(s, "/jobs/nightly", zklock.WithData([]byte("worker-a")))
	b, _ := zklock.NewMutex(s, "/jobs/nightly", zklock.WithData([]byte("worker-b")))
	_ = a.Lock(ctx)
	show(<-states)
	locked := make(chan error, 1)
	go func() { locked <- b.Lock(ctx) }()
	show(<-states)
	_ = a.Unlock(ctx)
	<-locked
	show(<-states)
	_ = b.Unlock(ctx)
	show(<-states)
	// Output:
	// free
	// mutex held by worker-a, 0 waiting
	// mutex held by worker-a, 1 waiting
	// mutex held by worker-b, 0 waiting
	// free
}

// A LockState names the holders asked to let go: a revocation request
// (Revoke) is a change WatchLock delivers.
func ExampleLockState() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	m, _ := zklock.NewMutex(s, "/example-lockstate", zklock.WithRevocable())
	_ = m.Lock(ctx)
	defer m.Unlock(context.Background())
	states, _ := zklock.WatchLock(ctx, s, "/example-lockstate")
	st := <-states
	fmt.Println(st.Kind, len(st.Holders), "holder,", len(st.Revoking), "asked to let go")
	_, _ = zklock.Revoke(ctx, s, "/example-lockstate")
	st = <-states
	fmt.Println(st.Revoking[0] == m.Guard().Path)
	// Output:
	// mutex 1 holder, 0 asked to let go
	// true
}

// WatchKind reads a path as a given kind: here a Curator-layout semaphore
// that nobody holds, which detection would show as nothing at all.
func ExampleWatchKind() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	ctx, stop := context.WithCancel(ctx)
	defer stop()
	detected, _ := zklock.WatchLock(ctx, s, "/example-watchkind")
	given, _ := zklock.WatchLock(ctx, s, "/example-watchkind", zklock.WatchKind(zklock.KindSemaphore))
	fmt.Printf("detected %q, given %q\n", (<-detected).Kind, (<-given).Kind)
	// Output:
	// detected "", given "semaphore"
}
