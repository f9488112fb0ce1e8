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

func ExampleRWMutex() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()

	// Two owners (two handles) read together; a third may not write.
	r1, _ := zklock.NewRWMutex(s, "/config/rw")
	r2, _ := zklock.NewRWMutex(s, "/config/rw")
	w, _ := zklock.NewRWMutex(s, "/config/rw")
	fmt.Println("reader 1:", r1.RLock(ctx))
	fmt.Println("reader 2:", r2.RLock(ctx))
	fmt.Println("writer blocked:", errors.Is(w.TryLock(ctx), zklock.ErrLocked))
	cs, _ := zklock.Contenders(ctx, s, "/config/rw")
	fmt.Println("holders:", cs[0].Kind, cs[1].Kind)

	_ = r1.RUnlock(ctx)
	_ = r2.RUnlock(ctx)
	fmt.Println("writer:", w.Lock(ctx))
	fmt.Println("reader blocked:", errors.Is(r1.TryRLock(ctx), zklock.ErrLocked))
	_ = w.Unlock(ctx)

	// Lock waits for every reader, the handle's own too, as with
	// sync.RWMutex: release the read lock before taking the write lock.
	_ = r1.RLock(ctx)
	fmt.Println("write while reading:", errors.Is(r1.TryLock(ctx), zklock.ErrLocked))
	_ = r1.RUnlock(ctx)
	// Output:
	// reader 1: <nil>
	// reader 2: <nil>
	// writer blocked: true
	// holders: rwmutex_read rwmutex_read
	// writer: <nil>
	// reader blocked: true
	// write while reading: true
}

func ExampleRWMutex_Downgrade() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewRWMutex(s, "/catalog/rw")

	// Downgrade: write, then keep reading what was written while other
	// readers may join, and no writer can slip in between.
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("write token > 0:", m.Token() > 0)
	fmt.Println("downgrade:", m.Downgrade(ctx))
	fmt.Println("release write:", m.Unlock(ctx))

	reader, _ := zklock.NewRWMutex(s, "/catalog/rw")
	fmt.Println("another reader:", reader.TryRLock(ctx))
	_ = reader.RUnlock(ctx)
	fmt.Println("release read:", m.RUnlock(ctx))
	// Output:
	// write token > 0: true
	// downgrade: <nil>
	// release write: <nil>
	// another reader: <nil>
	// release read: <nil>
}

func ExampleRWMutex_RLock() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewRWMutex(s, "/catalog/readers")

	// Readers of one handle, as of sync.RWMutex, share the lock.
	fmt.Println("reader 1:", m.RLock(ctx))
	fmt.Println("reader 2:", m.RLock(ctx))
	fmt.Println("writer blocked:", errors.Is(m.TryLock(ctx), zklock.ErrLocked))
	fmt.Println("release:", m.RUnlock(ctx), m.RUnlock(ctx))
	// Output:
	// reader 1: <nil>
	// reader 2: <nil>
	// writer blocked: true
	// release: <nil> <nil>
}
