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

// acquisitions is a Metrics that counts granted acquisitions and the holds
// that ended; a real one exports them (metrics/prometheus.New(),
// metrics/otel.New()).
type acquisitions struct {
	mu             sync.Mutex
	acquired, held int
}

func (c *acquisitions) AcquireWait(kind zklock.Kind, path string, d time.Duration, err error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err == nil {
		c.acquired++
	}
}

func (c *acquisitions) Hold(kind zklock.Kind, path string, d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.held++
}

func (c *acquisitions) Loss(kind zklock.Kind, path string)    {}
func (c *acquisitions) SessionState(st zk.State)              {}
func (c *acquisitions) Revoked(kind zklock.Kind, path string) {}
func (c *acquisitions) Expired(kind zklock.Kind, path string) {}

func ExampleMetrics() {
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	var m acquisitions
	s, err := zklock.NewSession(ctx, zklock.WithServers(strings.Split(os.Getenv("ZK_SERVERS"), ",")...), zklock.WithMetrics(&m)) // ZK_SERVERS: host:port,...
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	mu, err := zklock.NewMutex(s, "/ex/metrics/lock")
	if err != nil {
		fmt.Println(err)
		return
	}
	for range 3 {
		if err := mu.Lock(ctx); err != nil {
			fmt.Println(err)
			return
		}
		if err := mu.Unlock(ctx); err != nil {
			fmt.Println(err)
			return
		}
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	fmt.Println("acquired:", m.acquired, "held:", m.held)
	// Output:
	// acquired: 3 held: 3
}
