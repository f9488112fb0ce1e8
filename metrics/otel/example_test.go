package otel_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/zklock/zklock"
	zkotel "github.com/zklock/zklock/metrics/otel"
	"github.com/zklock/zklock/zktest"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
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

	reader := sdkmetric.NewManualReader() // or a periodic reader with an exporter
	mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer mp.Shutdown(ctx)
	m, err := zkotel.New(mp) // or nil, for otel.GetMeterProvider()
	if err != nil {
		fmt.Println(err)
		return
	}
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
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		fmt.Println(err)
		return
	}
	for _, sm := range rm.ScopeMetrics {
		for _, x := range sm.Metrics {
			switch d := x.Data.(type) {
			case metricdata.Sum[int64]:
				if x.Name == "zklock.acquisitions" {
					p := d.DataPoints[0]
					fmt.Println(x.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Value)
				}
			case metricdata.Histogram[float64]:
				if x.Name == "zklock.hold.duration" {
					p := d.DataPoints[0]
					fmt.Println(x.Name, p.Attributes.Encoded(attribute.DefaultEncoder()), p.Count)
				}
			}
		}
	}
	// Output:
	// zklock.acquisitions zklock.kind=mutex,zklock.path=/jobs/compact 2
	// zklock.hold.duration zklock.kind=mutex,zklock.path=/jobs/compact 2
}
