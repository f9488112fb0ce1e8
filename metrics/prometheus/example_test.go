package prometheus_test

import (
	"context"
	"fmt"
	"os"
	"time"

	prom "github.com/prometheus/client_golang/prometheus"
	"github.com/zklock/zklock"
	zkprom "github.com/zklock/zklock/metrics/prometheus"
	"github.com/zklock/zklock/zktest"
)

func ExampleNew() {
	c, err := zktest.Launch(context.Background(), 1) // a throwaway ZooKeeper for this example
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()

	m := zkprom.New()
	reg := prom.NewRegistry() // or prometheus.DefaultRegisterer
	reg.MustRegister(m)
	s, err := zklock.NewSession(ctx, zklock.WithServers(c.Servers()...), zklock.WithMetrics(m))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer s.Close()
	mu, _ := zklock.NewMutex(s, "/jobs/compact")
	for range 2 {
		if err := mu.Lock(ctx); err != nil {
			fmt.Println(err)
			return
		}
		if err := mu.Unlock(ctx); err != nil {
			fmt.Println(err)
			return
		}
	}
	families, _ := reg.Gather()
	for _, f := range families {
		if f.GetName() == "zklock_acquisitions_total" || f.GetName() == "zklock_hold_seconds" {
			for _, x := range f.GetMetric() {
				fmt.Println(f.GetName(), x.GetLabel()[0].GetValue(), x.GetLabel()[1].GetValue(),
					x.GetCounter().GetValue()+float64(x.GetHistogram().GetSampleCount()))
			}
		}
	}
	// Output:
	// zklock_acquisitions_total mutex /jobs/compact 2
	// zklock_hold_seconds mutex /jobs/compact 2
}
