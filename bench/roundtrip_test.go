package main

import (
	"context"
	"fmt"
	"io"
	"log"
	"testing"
	"time"

	"github.com/go-zookeeper/zk"
	"github.com/zklock/zklock/internal/client"
	"github.com/zklock/zklock/zktest"
)

// BenchmarkRoundTrip measures zklock's ZooKeeper client (internal/client)
// and go-zookeeper (the version this module requires) side by side in one
// run, on the same local standalone server, the same requests in the same
// loop: one goroutine (round-trip latency) and 64 goroutines sharing the
// session (pipelined). Allocations are the client's own per request (the
// server's are in another process). It lives here, beside the other
// comparisons with go-zookeeper, because zklock's own module does not
// require go-zookeeper at all.
func BenchmarkRoundTrip(b *testing.B) {
	const testTimeout = 10 * time.Second
	ctx := context.Background()
	server := zktest.Start(b)
	open := client.WorldACL(client.PermAll)
	c, err := client.Dial(ctx, client.Config{Servers: server.Servers(), Timeout: testTimeout})
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close()
	z, events, err := zk.Connect(server.Servers(), testTimeout, zk.WithLogger(log.New(io.Discard, "", 0)), zk.WithLogInfo(false))
	if err != nil {
		b.Fatal(err)
	}
	defer z.Close()
	for ev := range events {
		if ev.State == zk.StateHasSession {
			break
		}
	}
	go func() {
		for range events {
		}
	}()
	dir := fmt.Sprintf("/bench-%d", time.Now().UnixNano())
	if _, _, err := c.Create(ctx, dir, nil, client.ModePersistent, open); err != nil {
		b.Fatal(err)
	}
	node := dir + "/n"
	if _, _, err := c.Create(ctx, node, []byte("0123456789abcdef"), client.ModePersistent, open); err != nil {
		b.Fatal(err)
	}
	value, prefix := []byte("x"), dir+"/e-" // made once: the loops measure the clients

	gozkACL := zk.WorldACL(zk.PermAll)
	type loop struct {
		name   string
		client func() error
		gozk   func() error
	}
	loops := []loop{
		{"get",
			func() error { _, _, err := c.Get(ctx, node); return err },
			func() error { _, _, err := z.Get(node); return err }},
		{"exists",
			func() error { _, _, err := c.Exists(ctx, node); return err },
			func() error { _, _, err := z.Exists(node); return err }},
		{"set",
			func() error { _, err := c.Set(ctx, node, value, -1); return err },
			func() error { _, err := z.Set(node, value, -1); return err }},
		{"create-delete",
			func() error {
				name, _, err := c.Create(ctx, prefix, nil, client.ModeEphemeralSequential, open)
				if err == nil {
					err = c.Delete(ctx, name, -1)
				}
				return err
			},
			func() error {
				name, err := z.Create(prefix, nil, zk.FlagEphemeral|zk.FlagSequence, gozkACL)
				if err == nil {
					err = z.Delete(name, -1)
				}
				return err
			}},
	}
	for _, l := range loops {
		for _, lib := range []struct {
			name string
			do   func() error
		}{{"client", l.client}, {"go-zookeeper", l.gozk}} {
			b.Run(l.name+"/serial/"+lib.name, func(b *testing.B) {
				b.ReportAllocs()
				began := cpuTime()
				for b.Loop() {
					if err := lib.do(); err != nil {
						b.Fatal(err)
					}
				}
				reportCPU(b, began)
			})
			b.Run(l.name+"/64-goroutines/"+lib.name, func(b *testing.B) {
				b.ReportAllocs()
				b.SetParallelism(32) // 64 goroutines on two cores
				began := cpuTime()
				b.RunParallel(func(pb *testing.PB) {
					for pb.Next() {
						if err := lib.do(); err != nil {
							b.Error(err)
							return
						}
					}
				})
				reportCPU(b, began)
			})
		}
	}
}

// reportCPU reports the client process's CPU time per op since began
// (cpu-ns/op): what a request costs the client, apart from the wait for
// the server, which wall time (ns/op) mostly is on a local server.
func reportCPU(b *testing.B, began time.Duration) {
	if used := cpuTime() - began; used > 0 {
		b.ReportMetric(float64(used.Nanoseconds())/float64(b.N), "cpu-ns/op")
	}
}
