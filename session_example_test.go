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

// A Session lives until Close: Done closes once Close has finished, and
// the primitives made on it fail with ErrSessionClosed from then on.
func ExampleSession() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	m, err := zklock.NewMutex(s, "/ex/session/lock")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("deadline ahead:", time.Until(s.OwnershipDeadline()) > 0)
	fmt.Println("close:", s.Close())
	<-s.Done()
	fmt.Println("lock after Close:", errors.Is(m.Lock(ctx), zklock.ErrSessionClosed))
	// Output:
	// deadline ahead: true
	// close: <nil>
	// lock after Close: true
}

// Options apply in order; a bad value makes NewSession return an error
// wrapping ErrInvalidArgument.
func ExampleSessionOption() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",") // ZK_SERVERS: host:port,...
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := zklock.NewSession(ctx, zklock.WithServers(servers...), zklock.WithSessionTimeout(-time.Second))
	fmt.Println("negative timeout refused:", errors.Is(err, zklock.ErrInvalidArgument))
	s, err := zklock.NewSession(ctx, zklock.WithServers(servers...), zklock.WithSessionTimeout(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println("state:", s.Client().State())
	// Output:
	// negative timeout refused: true
	// state: connected
}

// A MultiLock holds every part or none. Its Lost closes when any part's
// hold ends, an Unlock included, and a second Lock while it holds is
// refused rather than queued.
func ExampleMultiLock() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	a, _ := zklock.NewMutex(s, "/ex/multilock/a")
	b, _ := zklock.NewMutex(s, "/ex/multilock/b")
	both, err := zklock.NewMultiLock(a, b)
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := both.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	lost := both.Lost()
	closed := func() bool {
		select {
		case <-lost:
			return true
		default:
			return false
		}
	}
	fmt.Println("lost while held:", closed())
	fmt.Println("second Lock:", errors.Is(both.Lock(ctx), zklock.ErrAlreadyLocked))
	fmt.Println("unlock:", both.Unlock(ctx))
	fmt.Println("lost after Unlock:", closed())
	// Output:
	// lost while held: false
	// second Lock: true
	// unlock: <nil>
	// lost after Unlock: true
}
