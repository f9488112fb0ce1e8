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

// Processes that share a lock share a user: nodes are creator-only, so a
// client authenticated as anyone else, or not at all, cannot touch them.
func ExampleWithDigestAuth() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",") // ZK_SERVERS: host:port,...
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	s, err := zklock.NewSession(ctx, zklock.WithServers(servers...),
		zklock.WithDigestAuth("billing", "s3cret"))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	m, _ := zklock.NewMutex(s, "/billing/invoice-run")
	if err := m.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	acl, _, err := s.Client().GetACL(ctx, m.Guard().Path)
	fmt.Println("ACL:", acl[0].Scheme, acl[0].Perms == zk.PermAll, err)

	anon, err := zklock.NewSession(ctx, zklock.WithServers(servers...))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer anon.Close()
	rival, _ := zklock.NewMutex(anon, "/billing/invoice-run")
	fmt.Println("anonymous Lock refused:", errors.Is(rival.Lock(ctx), zk.ErrNoAuth))
	fmt.Println("anonymous delete refused:", errors.Is(anon.Client().Delete(ctx, m.Guard().Path, -1), zk.ErrNoAuth))
	fmt.Println("unlock:", m.Unlock(ctx))
	// Output:
	// ACL: digest true <nil>
	// anonymous Lock refused: true
	// anonymous delete refused: true
	// unlock: <nil>
}
