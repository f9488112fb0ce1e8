package zklock_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// revocations is a Metrics that counts the revocation requests its
// session's holders receive.
type revocations struct {
	mu      sync.Mutex
	revoked int
}

func (c *revocations) AcquireWait(kind zklock.Kind, path string, d time.Duration, err error) {}
func (c *revocations) Hold(kind zklock.Kind, path string, d time.Duration)                   {}
func (c *revocations) Loss(kind zklock.Kind, path string)                                    {}
func (c *revocations) SessionState(st zk.State)                                              {}
func (c *revocations) Expired(kind zklock.Kind, path string)                                 {}

func (c *revocations) Revoked(kind zklock.Kind, path string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.revoked++
}

func ExampleMetrics_revocations() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var m revocations
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...), zklock.WithMetrics(&m)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	mu, err := zklock.NewMutex(s, "/ex/recipemetrics/lock", zklock.WithRevocable())
	if err != nil {
		fmt.Println(err)
		return
	}
	if err := mu.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	if _, err := zklock.Revoke(ctx, s, "/ex/recipemetrics/lock"); err != nil {
		fmt.Println(err)
		return
	}
	<-mu.Revoked()
	if err := mu.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	s.Close() // reported events are delivered before Close returns
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Println("revocations:", m.revoked)
	// Output:
	// revocations: 1
}
