package zklock_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// The examples take their servers from ZK_SERVERS, as the README program
// does (the tests point it at one throwaway ZooKeeper: internal/exampleserver),
// each on its own paths.

func ExampleNewSession() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",") // ZK_SERVERS: host:port,...
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(servers...), zklock.WithSessionTimeout(10*time.Second))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	fmt.Println("state:", s.State())
	fmt.Println("has a session:", s.SessionID() != 0)
	// Output:
	// state: connected
	// has a session: true
}

func ExampleContender() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	holder, _ := zklock.NewMutex(s, "/ex/contender/lock", zklock.WithData([]byte("worker-1")))
	_ = holder.Lock(ctx)
	defer holder.Unlock(ctx)
	cs, err := zklock.Contenders(ctx, s, "/ex/contender/lock")
	if err != nil {
		fmt.Println(err)
		return
	}
	for _, c := range cs {
		fmt.Printf("%s %s ours=%v token=%v\n", c.Kind, c.Data, c.Path == holder.Guard().Path, c.Token == holder.Token())
	}
	// Output:
	// mutex worker-1 ours=true token=true
}

func ExampleLockedError() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	a, _ := zklock.NewMutex(s, "/ex/locked/lock", zklock.WithData([]byte("deployer-a")))
	b, _ := zklock.NewMutex(s, "/ex/locked/lock")
	_ = a.Lock(ctx)
	defer a.Unlock(ctx)
	var locked *zklock.LockedError
	if err := b.TryLock(ctx); errors.As(err, &locked) {
		fmt.Printf("held by %s (ErrLocked: %v)\n", locked.Data, errors.Is(err, zklock.ErrLocked))
	}
	// Output:
	// held by deployer-a (ErrLocked: true)
}

func ExampleWrongKindError() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewMutex(s, "/ex/kinds/path")
	_ = m.Lock(ctx)
	defer m.Unlock(ctx)
	sem, _ := zklock.NewSemaphore(s, "/ex/kinds/path", 2) // another kind on the same path
	_, err = sem.Acquire(ctx, 1)
	var wrong *zklock.WrongKindError
	if errors.As(err, &wrong) {
		fmt.Println("found:", wrong.Found, errors.Is(err, zklock.ErrWrongKind))
	}
	// Output:
	// found: mutex true
}

func ExampleKind() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	r, _ := zklock.NewRWMutex(s, "/ex/kinds/rw")
	_ = r.RLock(ctx)
	defer r.RUnlock(ctx)
	cs, _ := zklock.Contenders(ctx, s, "/ex/kinds/rw")
	fmt.Println(cs[0].Kind, cs[0].Kind == zklock.KindRWMutexRead)
	// Output:
	// rwmutex_read true
}

func ExampleHolderAliveError() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewMutex(s, "/ex/alive/lock", zklock.WithData([]byte("stuck-job")))
	_ = m.Lock(ctx)
	defer m.Unlock(ctx)
	_, err = zklock.Break(ctx, s, "/ex/alive/lock", false) // the holder's session is alive
	var alive *zklock.HolderAliveError
	if errors.As(err, &alive) {
		fmt.Printf("refused: %s still holds (ErrHolderAlive: %v)\n", alive.Holder.Data, errors.Is(err, zklock.ErrHolderAlive))
	}
	// Output:
	// refused: stuck-job still holds (ErrHolderAlive: true)
}

func ExampleBreak() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewMutex(s, "/ex/break/lock")
	_ = m.Lock(ctx)
	// An operator breaks a stuck lock whose holder is alive: force.
	broken, err := zklock.Break(ctx, s, "/ex/break/lock", true)
	fmt.Println("broken:", len(broken), err)
	// The old holder is not told (its Lost does not fire): fencing is what
	// keeps it out. Its guarded writes now fail.
	_, err = s.Client().Multi(ctx, m.Guard(), &zk.CreateOp{Path: "/ex/break/out", ACL: zk.WorldACL(zk.PermAll)})
	fmt.Println("old holder's guarded write refused:", errors.Is(err, zk.ErrNoNode))
	_ = m.Unlock(ctx)
	// Output:
	// broken: 1 <nil>
	// old holder's guarded write refused: true
}

func ExampleLeaderInfo() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	e, _ := zklock.NewElection(s, "/ex/leader/election")
	term, err := e.Campaign(ctx, []byte("10.0.0.7:8080"))
	if err != nil {
		fmt.Println(err)
		return
	}
	info, err := e.Leader(ctx)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("leader %s, ours: %v, same token: %v\n", info.Value, info.Node == term.Guard().Path, info.Token == term.Token())
	_ = e.Resign(ctx)
	// Output:
	// leader 10.0.0.7:8080, ours: true, same token: true
}

func ExampleTerm() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	e, _ := zklock.NewElection(s, "/ex/term/election")
	term, err := e.Campaign(ctx, []byte("me"))
	if err != nil {
		fmt.Println(err)
		return
	}
	// Work for as long as the term lasts: the context ends with it.
	work, cancel := term.Context(ctx)
	defer cancel()
	// Writes that must not outlive the term go in a multi with its guard.
	_, err = s.Client().Multi(work, term.Guard(), &zk.CreateOp{Path: "/ex/term/epoch", Data: []byte(fmt.Sprint(term.Token())),
		ACL: zk.WorldACL(zk.PermAll)})
	fmt.Println("guarded write:", err)
	_ = e.Resign(ctx)
	<-term.Lost() // closed when the term ends, resigned or lost
	fmt.Println("term over:", work.Err() != nil)
	// Output:
	// guarded write: <nil>
	// term over: true
}

func ExampleOption() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	// Options configure a primitive; each states its default.
	m, err := zklock.NewMutex(s, "/ex/option/lock", zklock.WithData([]byte("batch-7")), zklock.WithMaxHold(time.Minute))
	if err != nil {
		fmt.Println(err)
		return
	}
	_ = m.Lock(ctx)
	cs, _ := zklock.Contenders(ctx, s, "/ex/option/lock")
	fmt.Printf("holder data: %s\n", cs[0].Data)
	_ = m.Unlock(ctx)
	_, err = zklock.NewMutex(s, "/ex/option/lock", zklock.WithMaxHold(-time.Second))
	fmt.Println("bad option:", errors.Is(err, zklock.ErrInvalidArgument))
	// Output:
	// holder data: batch-7
	// bad option: true
}

func ExampleWithMaxHold() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewMutex(s, "/ex/maxhold/lock", zklock.WithMaxHold(200*time.Millisecond))
	_ = m.Lock(ctx)
	<-m.Lost() // a hung holder loses the lock at the bound
	fmt.Println("Unlock after the bound:", errors.Is(m.Unlock(ctx), zklock.ErrLockLost))
	// Output:
	// Unlock after the bound: true
}

func ExampleWithCohort() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	// Goroutines of one process share one place in the queue: between
	// them, the lock is handed over in memory, up to 32 handoffs or 100ms.
	var wg sync.WaitGroup
	var mu sync.Mutex
	counter := 0
	for range 8 {
		m, _ := zklock.NewMutex(s, "/ex/cohort/lock", zklock.WithCohort(0, 0)) // the default bounds: 32 handoffs, 100ms
		wg.Add(1)
		go func() {
			defer wg.Done()
			for range 10 {
				if err := m.Lock(ctx); err != nil {
					fmt.Println(err)
					return
				}
				mu.Lock()
				counter++
				mu.Unlock()
				_ = m.Unlock(ctx)
			}
		}()
	}
	wg.Wait()
	fmt.Println("increments:", counter)
	// Output:
	// increments: 80
}

func ExampleRevoke() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewMutex(s, "/ex/revoke/lock", zklock.WithRevocable())
	_ = m.Lock(ctx)
	nodes, err := zklock.Revoke(ctx, s, "/ex/revoke/lock") // from anywhere: asks the holder
	fmt.Println("asked:", len(nodes), err)
	<-m.Revoked() // the holder decides: here it lets go
	fmt.Println("unlock:", m.Unlock(ctx))
	// Output:
	// asked: 1 <nil>
	// unlock: <nil>
}

func ExampleNewMultiLock() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	from, _ := zklock.NewMutex(s, "/ex/multi/accounts/1")
	to, _ := zklock.NewMutex(s, "/ex/multi/accounts/2")
	both, err := zklock.NewMultiLock(to, from) // any order: taken in sorted order
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := both.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	// One multi commits only while every part is held.
	ops := append(both.Guard(), &zk.CreateOp{Path: "/ex/multi/transfer", ACL: zk.WorldACL(zk.PermAll)})
	_, err = s.Client().Multi(ctx, ops...)
	fmt.Println("guarded transfer:", err, "tokens:", len(both.Tokens()))
	fmt.Println("unlock:", both.Unlock(ctx))
	// Output:
	// guarded transfer: <nil> tokens: 2
	// unlock: <nil>
}

func ExamplePart() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	rw, _ := zklock.NewRWMutex(s, "/ex/part/config")
	sem, _ := zklock.NewSemaphore(s, "/ex/part/workers", 4)
	// A Part is one hold of a MultiLock: a Mutex, either side of an
	// RWMutex, or a semaphore lease.
	m, err := zklock.NewMultiLock(rw.ReadPart(), sem)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("lock:", m.Lock(ctx), "guards:", len(m.Guard()))
	fmt.Println("unlock:", m.Unlock(ctx))
	// Output:
	// lock: <nil> guards: 2
	// unlock: <nil>
}

func ExampleContenders() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	sem, _ := zklock.NewSemaphore(s, "/ex/contenders/slots", 1)
	lease, err := sem.Acquire(ctx, 1)
	if err != nil {
		fmt.Println(err)
		return
	}
	defer lease.Release(ctx)
	other, _ := zklock.NewSemaphore(s, "/ex/contenders/slots", 1)
	waitCtx, stop := context.WithCancel(ctx)
	defer stop()
	go other.Acquire(waitCtx, 1) //nolint:errcheck // it waits until stop
	// Who holds, who waits: any kind of primitive's path. (The loop gives
	// the waiter's node time to appear.)
	for range 500 {
		cs, err := zklock.Contenders(ctx, s, "/ex/contenders/slots")
		if err != nil {
			fmt.Println(err)
			return
		}
		if len(cs) == 2 {
			fmt.Println("holds:", cs[0].Holds, "then waits:", !cs[1].Holds)
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	// Output:
	// holds: true then waits: true
}
