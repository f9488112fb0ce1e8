package main

import (
	"bytes"
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/zklock/zklock/zktest"
)

// servers are the three servers of a run, all on 127.0.0.1. ZooKeeper runs
// without fsync (zktest's forceSync=no), etcd keeps its data in /dev/shm so
// its fsyncs cost no disk, and Redis persists nothing: no server pays for
// the disk, so the comparison is of the protocols and clients.
type servers struct {
	zk       *zktest.Cluster
	zkAddr   string
	etcdAddr string
	redis    string
	procs    []*child
	dirs     []string
}

type child struct {
	cmd    *exec.Cmd
	exited chan struct{} // closed once Wait has returned
}

func startServers(ctx context.Context) (*servers, error) {
	s := &servers{}
	// Minute-long sessions: pings then barely count in requests per
	// acquisition. The JIT flags undo zktest's fast-start C1-only setting,
	// so the server runs as a production JVM would. Empty CONTAINER parents
	// are reaped hourly, not every second (zktest) or minute (ZooKeeper's
	// default): a lock's parent stays between one implementation's trials,
	// as it would for a lock in steady use, instead of costing zklock and
	// Curator a re-creation that go-zookeeper's persistent parents never
	// need.
	zk, err := zktest.Launch(ctx, 1,
		zktest.WithSessionTimeouts(200*time.Millisecond, 2*time.Minute),
		zktest.WithContainerCheckInterval(time.Hour),
		zktest.WithJVMFlags("-XX:TieredStopAtLevel=4", "-Xmx1g"))
	if err != nil {
		return nil, err
	}
	s.zk, s.zkAddr = zk, zk.Servers()[0]
	if err := s.startEtcd(ctx); err != nil {
		s.close()
		return nil, err
	}
	if err := s.startRedis(ctx); err != nil {
		s.close()
		return nil, err
	}
	return s, nil
}

func (s *servers) startEtcd(ctx context.Context) error {
	base := "/dev/shm"
	if st, err := os.Stat(base); err != nil || !st.IsDir() {
		base = ""
	}
	dir, err := os.MkdirTemp(base, "zklock-bench-etcd-")
	if err != nil {
		return err
	}
	s.dirs = append(s.dirs, dir)
	ports, err := freePorts(2)
	if err != nil {
		return err
	}
	client := "http://127.0.0.1:" + strconv.Itoa(ports[0])
	peer := "http://127.0.0.1:" + strconv.Itoa(ports[1])
	s.etcdAddr = "127.0.0.1:" + strconv.Itoa(ports[0])
	return s.spawn(ctx, "etcd", filepath.Join(dir, "log"), s.etcdAddr,
		"/usr/bin/etcd", "--name", "bench", "--data-dir", filepath.Join(dir, "data"),
		"--listen-client-urls", client, "--advertise-client-urls", client,
		"--listen-peer-urls", peer, "--initial-advertise-peer-urls", peer,
		"--initial-cluster", "bench="+peer, "--log-level", "error")
}

func (s *servers) startRedis(ctx context.Context) error {
	dir, err := os.MkdirTemp("", "zklock-bench-redis-")
	if err != nil {
		return err
	}
	s.dirs = append(s.dirs, dir)
	ports, err := freePorts(1)
	if err != nil {
		return err
	}
	s.redis = "127.0.0.1:" + strconv.Itoa(ports[0])
	return s.spawn(ctx, "redis", filepath.Join(dir, "log"), s.redis,
		"/usr/bin/redis-server", "--bind", "127.0.0.1", "--port", strconv.Itoa(ports[0]),
		"--dir", dir, "--save", "", "--appendonly", "no", "--daemonize", "no")
}

// spawn starts a server as a child that dies with us (Pdeathsig) and waits
// until addr accepts connections.
func (s *servers) spawn(ctx context.Context, name, logPath, addr string, argv ...string) error {
	if _, err := os.Stat(argv[0]); err != nil {
		return fmt.Errorf("%s: %w (run scripts/install-deps.sh --bench)", name, err)
	}
	log, err := os.Create(logPath)
	if err != nil {
		return err
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = log, log
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	if err := cmd.Start(); err != nil {
		log.Close()
		return fmt.Errorf("start %s: %w", name, err)
	}
	log.Close()
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.procs = append(s.procs, &child{cmd, exited})
	deadline := time.Now().Add(30 * time.Second)
	for time.Now().Before(deadline) {
		if c, err := net.DialTimeout("tcp", addr, time.Second); err == nil {
			c.Close()
			return nil
		}
		select {
		case <-exited:
			out, _ := os.ReadFile(logPath)
			return fmt.Errorf("%s exited at start: %s", name, tail(out))
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
	return fmt.Errorf("%s did not listen on %s within 30s", name, addr)
}

func (s *servers) close() {
	for _, p := range s.procs {
		_ = p.cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, p := range s.procs {
		select {
		case <-p.exited:
		case <-time.After(5 * time.Second):
			_ = p.cmd.Process.Kill()
			<-p.exited
		}
	}
	if s.zk != nil {
		_ = s.zk.Close()
	}
	for _, d := range s.dirs {
		_ = os.RemoveAll(d)
	}
}

// zkPackets is the server's zk_packets_received counter.
func (s *servers) zkPackets(ctx context.Context) (int64, error) {
	return s.zk.MntrSum(ctx, "zk_packets_received")
}

func freePorts(k int) ([]int, error) {
	var ports []int
	var held []net.Listener
	defer func() {
		for _, l := range held {
			l.Close()
		}
	}()
	for len(ports) < k {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, err
		}
		held = append(held, l)
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}

func tail(b []byte) string {
	b = bytes.TrimSpace(b)
	if len(b) > 800 {
		b = b[len(b)-800:]
	}
	return strings.TrimSpace(string(b))
}
