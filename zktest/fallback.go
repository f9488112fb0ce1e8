package zktest

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/zklock/zklock/zktest/internal/fallback"
)

// dockerImport is the import that links zktest's Docker fallback into a
// test binary; the failure of a test that found no ZooKeeper quotes it.
const dockerImport = `import _ "github.com/zklock/zklock/zktest/docker"`

// fallbackProbeLimit bounds the check that the fallback backend can run a
// server (for Docker: that an engine answers its ping).
const fallbackProbeLimit = 10 * time.Second

// fallbackBackend returns the registered fallback backend, or nil; tests
// replace it.
var fallbackBackend = fallback.Registered

// startFallback runs one server through the registered fallback backend,
// for a test that found no local installation (localErr says why).
func startFallback(t testing.TB, n int, o options, localErr error) *Cluster {
	t.Helper()
	b := fallbackBackend()
	if b == nil {
		t.Fatalf("zktest: no ZooKeeper to run (%v; the Docker fallback is not linked in).\n%s", localErr, installHelp)
		return nil
	}
	probe, cancel := context.WithTimeout(context.Background(), fallbackProbeLimit)
	err := b.Available(probe)
	cancel()
	if err != nil {
		t.Fatalf("zktest: no ZooKeeper to run (%v; %s: %v).\n%s", localErr, b.Name(), err, installHelp)
		return nil
	}
	if n > 1 {
		t.Fatalf("zktest: an ensemble needs a local ZooKeeper installation (%v); "+
			"%s runs standalone servers only.\n%s", localErr, b.Name(), installHelp)
		return nil
	}
	set, err := reservePorts(1)
	if err != nil {
		t.Fatal(err)
	}
	ports := set.ports
	srv := &fallbackServer{name: b.Name(), startTimeout: o.startTimeout, s: b.NewServer(fallback.Config{
		HostPort:               ports[0],
		TickTime:               o.tickTime,
		MinSessionTimeout:      o.minSession,
		MaxSessionTimeout:      o.maxSession,
		ContainerCheckInterval: o.containerInterval,
	})}
	c := &Cluster{t: t, opts: o, source: b.Name(), ports: set}
	c.servers = []*Server{{c: c, index: 0, addr: "127.0.0.1:" + strconv.Itoa(ports[0]), ctl: srv}}
	t.Cleanup(c.cleanup)
	began := time.Now()
	ctx, cancel := context.WithTimeout(context.Background(), o.startTimeout)
	defer cancel()
	if err := srv.s.Start(ctx); err != nil {
		t.Fatalf("zktest: start %s: %v", b.Name(), err)
	}
	if err := c.waitServerUp(ctx, 0, true); err != nil {
		t.Fatalf("zktest: %s did not serve: %v", b.Name(), err)
	}
	c.setStartupTime(time.Since(began))
	return c
}

// fallbackServer controls a server of the fallback backend.
type fallbackServer struct {
	name         string
	startTimeout time.Duration
	s            fallback.Server
}

var _ control = (*fallbackServer)(nil)

func (f *fallbackServer) launch() error {
	ctx, cancel := context.WithTimeout(context.Background(), f.startTimeout)
	defer cancel()
	return f.s.Start(ctx)
}

func (f *fallbackServer) stop() error              { return f.s.Stop() }
func (f *fallbackServer) kill() error              { return f.s.Kill() }
func (f *fallbackServer) teardown() error          { return f.s.Close() }
func (f *fallbackServer) running() bool            { return f.s.Running() }
func (f *fallbackServer) exited() (bool, string)   { return f.s.Exited() }
func (f *fallbackServer) logTail(lines int) string { return f.s.LogTail(lines) }

func (f *fallbackServer) keep(string) error { return nil }

func (f *fallbackServer) pause() error {
	return fmt.Errorf("%w: Pause with %s", ErrNotSupported, f.name)
}

func (f *fallbackServer) resume() error {
	return fmt.Errorf("%w: Resume with %s", ErrNotSupported, f.name)
}
