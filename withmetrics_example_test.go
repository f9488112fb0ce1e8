package zklock_test

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/zklock/zklock"
	"github.com/zklock/zklock/zk"
)

// countingMetrics counts acquisitions and holds; a real one exports them
// (see package metrics/prometheus).
type countingMetrics struct{ acquired, held chan string }

func (c countingMetrics) AcquireWait(kind zklock.Kind, path string, d time.Duration, err error) {
	if err == nil {
		c.acquired <- string(kind) + " " + path
	}
}
func (c countingMetrics) Hold(kind zklock.Kind, path string, d time.Duration) {
	c.held <- string(kind) + " " + path
}
func (countingMetrics) Loss(kind zklock.Kind, path string) {}
func (countingMetrics) SessionState(zk.State)              {}
func (countingMetrics) Revoked(zklock.Kind, string)        {}
func (countingMetrics) Expired(zklock.Kind, string)        {}

func ExampleWithMetrics() {
	servers := strings.Split(os.Getenv("ZK_SERVERS"), ",") // ZK_SERVERS: host:port,...
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	m := countingMetrics{acquired: make(chan string, 1), held: make(chan string, 1)}
	s, err := zklock.NewSession(ctx, zklock.WithServers(servers...), zklock.WithMetrics(m))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	mu, _ := zklock.NewMutex(s, "/jobs/compact")
	if err := mu.Lock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("acquired:", <-m.acquired)
	if err := mu.Unlock(ctx); err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println("held:", <-m.held)
	// Output:
	// acquired: mutex /jobs/compact
	// held: mutex /jobs/compact
}
