package zktest

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// portAttempts is how many sets of ports startLocal tries: a port found free
// can be taken by another process before the JVM binds it.
const portAttempts = 3

// startLocal runs n servers from a local installation.
func startLocal(t testing.TB, in *install, n int, o options) *Cluster {
	t.Helper()
	o.cds = cdsFlags(in, o)
	base := t.TempDir()
	c := &Cluster{t: t, opts: o, source: in.where}
	if o.tls {
		tf, err := newTLSFiles(base)
		if err != nil {
			t.Fatalf("zktest: TLS certificates: %v", err)
		}
		c.tls = tf
	}
	nodes := make([]*node, n)
	for i := range nodes {
		nodes[i] = &node{id: i + 1, dir: filepath.Join(base, fmt.Sprintf("server%d", i+1))}
		p := &process{in: in, opts: o, n: nodes[i], ensemble: n > 1}
		c.servers = append(c.servers, &Server{c: c, index: i, ctl: p})
	}
	// Registered before any JVM starts, so that none outlives the test.
	t.Cleanup(c.cleanup)
	for attempt := 1; ; attempt++ {
		began := time.Now()
		err := c.launchAll(nodes)
		if err == nil {
			c.setStartupTime(time.Since(began))
			return c
		}
		if attempt == portAttempts || !c.bindFailed() {
			t.Fatalf("zktest: start %d server(s) from %s: %v", n, in.where, err)
		}
		t.Logf("zktest: a port was taken, retrying with new ports: %v", err)
		for _, s := range c.servers {
			_ = s.ctl.kill()
		}
	}
}

// launchAll picks ports, writes the configuration and starts every server at
// once, then waits until all of them serve.
func (c *Cluster) launchAll(nodes []*node) error {
	c.ports.release()
	set, err := assignPorts(nodes)
	if err != nil {
		return err
	}
	c.ports = set
	if c.peers != nil {
		c.peers.close()
		c.peers = nil
	}
	if c.opts.peerNet && len(nodes) > 1 {
		pn, err := newPeerNet(nodes)
		if err != nil {
			return err
		}
		c.peers = pn
	}
	for i, n := range nodes {
		if err := writeConfig(c.opts, c.tls, c.peers, nodes, i); err != nil {
			return fmt.Errorf("zktest: write config: %w", err)
		}
		c.servers[i].addr = n.addr()
		if c.tls != nil {
			c.servers[i].secureAddr = n.secureAddr()
		}
	}
	for _, s := range c.servers {
		if err := s.ctl.launch(); err != nil {
			return err
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), c.opts.startTimeout)
	defer cancel()
	if err := c.waitAllUp(ctx); err != nil {
		return err
	}
	return c.WaitReady(ctx)
}

// waitAllUp waits for every server in parallel until each serves.
func (c *Cluster) waitAllUp(ctx context.Context) error {
	errs := make([]error, len(c.servers))
	var wg sync.WaitGroup
	for i := range c.servers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = c.waitServerUp(ctx, i, true)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// bindFailed reports whether a server's log says one of its ports was taken.
func (c *Cluster) bindFailed() bool {
	for _, s := range c.servers {
		p, ok := s.ctl.(*process)
		if !ok {
			continue
		}
		if b, err := os.ReadFile(p.n.logPath()); err == nil && strings.Contains(string(b), "Address already in use") {
			return true
		}
	}
	return false
}
