// Command metrics exports zklock's measurements to Prometheus: a few
// workers take turns on one zklock.Mutex, some with TryLock and some with a
// short deadline, while /metrics on a loopback address shows their wait and
// hold times, acquisitions, timeouts, losses and the session state (see
// package github.com/zklock/zklock/metrics/prometheus for the list).
//
// Servers come from ZK_SERVERS (host:port,...). Without it, a throwaway
// standalone ZooKeeper is started from the local installation (see package
// zktest) and removed at the end.
//
//	go run ./examples/metrics [-listen 127.0.0.1:9464] [-workers 3] [-for 0]
//	curl -s http://127.0.0.1:9464/metrics | grep ^zklock_
//
// It runs until interrupted, or for the duration given with -for.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"math/rand/v2"
	"net"
	"net/http"
	"os"
	"os/signal"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	"github.com/zklock/zklock"
	zkprom "github.com/zklock/zklock/metrics/prometheus"
	"github.com/zklock/zklock/zktest"
)

type config struct {
	listen  string
	workers int
	runFor  time.Duration // 0: until ctx ends
}

func main() {
	var cfg config
	flag.StringVar(&cfg.listen, "listen", "127.0.0.1:9464", "loopback address to serve /metrics on")
	flag.IntVar(&cfg.workers, "workers", 3, "workers contending for the lock (1-50)")
	flag.DurationVar(&cfg.runFor, "for", 0, "how long to run; 0 runs until interrupted")
	flag.Parse()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Stdout, cfg, nil)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "metrics:", err)
		os.Exit(1)
	}
}

// run serves /metrics and runs the workers until ctx ends or cfg.runFor
// passes. ready, if not nil, receives the address served once it is.
func run(ctx context.Context, out io.Writer, cfg config, ready chan<- string) (err error) {
	if cfg.workers < 1 || cfg.workers > 50 {
		return fmt.Errorf("-workers %d: want 1 to 50", cfg.workers)
	}
	ln, err := listenLoopback(cfg.listen)
	if err != nil {
		return err
	}
	if cfg.runFor > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, cfg.runFor)
		defer cancel()
	}
	startCtx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	cluster, err := zktest.Launch(startCtx, 1)
	if err != nil {
		ln.Close()
		return err
	}
	defer func() { err = errors.Join(err, cluster.Close()) }()

	reg := prometheus.NewRegistry()
	m := zkprom.New()
	reg.MustRegister(m, collectors.NewGoCollector())
	srv := &http.Server{Handler: mux(reg), ReadHeaderTimeout: 5 * time.Second}
	served := make(chan error, 1)
	go func() { served <- srv.Serve(ln) }()
	defer func() {
		srv.Close()
		if e := <-served; !errors.Is(e, http.ErrServerClosed) {
			err = errors.Join(err, e)
		}
	}()

	s, err := zklock.NewSession(startCtx, zklock.WithServers(cluster.Servers()...), zklock.WithMetrics(m))
	if err != nil {
		return err
	}
	defer s.Close()
	fmt.Fprintf(out, "ZooKeeper at %s; serving http://%s/metrics\n", cluster.ConnectString(), ln.Addr())
	if ready != nil {
		ready <- ln.Addr().String()
	}
	path := "/zklock-metrics-example/run-" + strconv.FormatInt(time.Now().UnixNano(), 36)
	return work(ctx, s, path, cfg.workers)
}

// listenLoopback listens on addr, which must be a loopback address: the
// example exposes nothing beyond this machine.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("-listen %q: %w", addr, err)
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("-listen %q: want a loopback IP such as 127.0.0.1", addr)
	}
	return net.Listen("tcp", addr)
}

func mux(reg *prometheus.Registry) *http.ServeMux {
	m := http.NewServeMux()
	m.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{}))
	return m
}

// work runs the workers until ctx ends. Each holds the lock for a few
// milliseconds per turn; every third turn is a TryLock and every fifth has
// a deadline too short to wait for the others, so the busy and timeout
// results show up too.
func work(ctx context.Context, s *zklock.Session, path string, workers int) error {
	var wg sync.WaitGroup
	errs := make([]error, workers)
	for i := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = worker(ctx, s, path)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

func worker(ctx context.Context, s *zklock.Session, path string) error {
	m, err := zklock.NewMutex(s, path)
	if err != nil {
		return err
	}
	for turn := 1; ctx.Err() == nil; turn++ {
		err := take(ctx, m, turn)
		if err != nil && ctx.Err() == nil && !errors.Is(err, zklock.ErrLocked) &&
			!errors.Is(err, context.DeadlineExceeded) {
			return err
		}
		sleep(ctx, time.Duration(rand.IntN(20))*time.Millisecond)
	}
	return nil
}

func take(ctx context.Context, m *zklock.Mutex, turn int) error {
	var err error
	switch {
	case turn%3 == 0:
		err = m.TryLock(ctx)
	case turn%5 == 0:
		short, cancel := context.WithTimeout(ctx, time.Millisecond)
		err = m.Lock(short)
		cancel()
	default:
		err = m.Lock(ctx)
	}
	if err != nil {
		return err
	}
	sleep(ctx, time.Duration(1+rand.IntN(10))*time.Millisecond)
	// Release even when ctx has ended, so the last holder leaves no node.
	uctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 10*time.Second)
	defer cancel()
	return m.Unlock(uctx)
}

func sleep(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
	case <-ctx.Done():
	}
}
