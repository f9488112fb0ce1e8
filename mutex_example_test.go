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

func ExampleMutex_Lock() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",") // ZK_SERVERS: host:port,...
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(servers...))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	m, err := zklock.NewMutex(s, "/jobs/nightly-report")
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// Write under the lock: the guard makes the write commit only while the
	// lock is held, and the token lets other resources reject a stale holder.
	_, err = s.Client().Multi(ctx, m.Guard(), &zk.CreateOp{Path: "/jobs/last-run", Data: []byte(fmt.Sprint(m.Token())), ACL: zk.WorldACL(zk.PermAll)})
	fmt.Println("guarded write:", err)
	select {
	case <-m.Lost():
		fmt.Println("lost the lock: stop working")
	default:
		fmt.Println("working while held")
	}
	fmt.Println("unlock:", m.Unlock(ctx))
	fmt.Println("again:", errors.Is(m.Unlock(ctx), zklock.ErrNotLocked))
	// Output:
	// guarded write: <nil>
	// working while held
	// unlock: <nil>
	// again: true
}

func ExampleMutex_TryLock() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	a, _ := zklock.NewMutex(s, "/deploy", zklock.WithData([]byte("deployer-a")))
	b, _ := zklock.NewMutex(s, "/deploy")
	fmt.Println("a:", a.TryLock(ctx))
	err = b.TryLock(ctx)
	var held *zklock.LockedError
	if errors.As(err, &held) {
		fmt.Printf("b: locked by %s\n", held.Data)
	}
	_ = a.Unlock(ctx)
	// Output:
	// a: <nil>
	// b: locked by deployer-a
}

func ExampleReentrantMutex() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	owner, _ := zklock.NewReentrantMutex(s, "/accounts/42")
	other, _ := zklock.NewReentrantMutex(s, "/accounts/42") // another owner
	_ = owner.Lock(ctx)
	_ = owner.Lock(ctx) // re-entry: one round trip (its node is looked at)
	fmt.Println("other owner:", errors.Is(other.TryLock(ctx), zklock.ErrLocked))
	fmt.Println("non-owner unlock:", errors.Is(other.Unlock(ctx), zklock.ErrNotOwner))
	_ = owner.Unlock(ctx) // one Lock still to match: the owner still holds
	fmt.Println("after one unlock:", errors.Is(other.TryLock(ctx), zklock.ErrLocked))
	_ = owner.Unlock(ctx)
	fmt.Println("other owner now:", other.TryLock(ctx))
	_ = other.Unlock(ctx)
	// Output:
	// other owner: true
	// non-owner unlock: true
	// after one unlock: true
	// other owner now: <nil>
}

// A lock with a long queue of waiters (hundreds of workers on one job)
// takes zklock's sequence layout: each enqueue finds the node ahead of it
// by its number instead of listing the queue. Every process on the path
// must use it; Curator's cannot.
func ExampleWithSequenceLayout() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	m, err := zklock.NewMutex(s, "/jobs/shared-queue", zklock.WithSequenceLayout())
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	cs, _ := zklock.Contenders(ctx, s, "/jobs/shared-queue")
	name := cs[0].Path[len("/jobs/shared-queue/"):]
	fmt.Println("node:", name[strings.Index(name, "-")+1:len(name)-10]) // "<the path's czxid, hex>-seqlock-<seq>"
	// A node of a reaped path's earlier life may have its name for a
	// moment: there is no Guard, and writes are fenced with Token.
	fmt.Println("guard:", m.Guard() == nil, "token:", m.Token() == cs[0].Token)
	// A Mutex of the default layout refuses the path while it is in use.
	other, _ := zklock.NewMutex(s, "/jobs/shared-queue")
	fmt.Println("default layout:", errors.Is(other.TryLock(ctx), zklock.ErrWrongKind))
	fmt.Println("unlock:", m.Unlock(ctx))
	// Output:
	// node: seqlock-
	// guard: true token: true
	// default layout: true
	// unlock: <nil>
}
