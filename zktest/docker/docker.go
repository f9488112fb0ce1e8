package docker

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/netip"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/moby/moby/api/types/container"
	"github.com/moby/moby/api/types/network"
	"github.com/moby/moby/client"
	"github.com/testcontainers/testcontainers-go"

	"github.com/zklock/zklock/zktest/internal/fallback"
)

const (
	image     = "zookeeper:3.8"
	stopGrace = 10 * time.Second
)

// errClosed is returned by a Start after Close, or during which Close came.
var errClosed = errors.New("zktest/docker: server closed")

func init() { fallback.Register(backend{}) }

// backend runs each server in a container of its own.
type backend struct{}

func (backend) Name() string { return "docker " + image }

// Available pings the Docker engine.
func (backend) Available(ctx context.Context) error {
	cli, err := testcontainers.NewDockerClientWithOpts(ctx)
	if err != nil {
		return fmt.Errorf("no Docker engine: %w", err)
	}
	defer cli.Close()
	if _, err := cli.Ping(ctx, client.PingOptions{}); err != nil {
		return fmt.Errorf("no Docker engine answers: %w", err)
	}
	return nil
}

func (backend) NewServer(cfg fallback.Config) fallback.Server { return &server{cfg: cfg} }

// server controls a server in a container. The host port is chosen by
// zktest, not Docker, so that it stays the same across Stop and Start.
type server struct {
	cfg fallback.Config

	// mu guards ctr and closed, never a call to Docker: Close may come
	// while the container is being created, which it does not interrupt.
	mu     sync.Mutex
	ctr    *testcontainers.DockerContainer
	closed bool
}

var _ fallback.Server = (*server)(nil)

// container returns the container, nil before the first Start.
func (s *server) container() *testcontainers.DockerContainer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ctr
}

// Start creates the container the first time, and starts it again after
// Stop or Kill.
func (s *server) Start(ctx context.Context) error {
	s.mu.Lock()
	ctr, closed := s.ctr, s.closed
	s.mu.Unlock()
	switch {
	case closed:
		return errClosed
	case ctr != nil:
		return ctr.Start(ctx)
	}
	ctr, err := s.create(ctx)
	s.mu.Lock()
	closed = s.closed
	if !closed {
		s.ctr = ctr // even when err != nil: Close removes what was created
	}
	s.mu.Unlock()
	if closed {
		// Close came during the creation and found nothing to remove.
		return errors.Join(errClosed, terminate(ctr))
	}
	return err
}

func (s *server) create(ctx context.Context) (*testcontainers.DockerContainer, error) {
	ms := func(v time.Duration) string { return strconv.FormatInt(v.Milliseconds(), 10) }
	port := network.MustParsePort("2181/tcp")
	return testcontainers.Run(ctx, image,
		testcontainers.WithExposedPorts("2181/tcp"),
		testcontainers.WithEnv(map[string]string{
			"ZOO_TICK_TIME":              ms(s.cfg.TickTime),
			"ZOO_4LW_COMMANDS_WHITELIST": "*",
			"ZOO_ADMINSERVER_ENABLED":    "false",
			"ZOO_CFG_EXTRA": "minSessionTimeout=" + ms(s.cfg.MinSessionTimeout) +
				" maxSessionTimeout=" + ms(s.cfg.MaxSessionTimeout),
			"JVMFLAGS": "-Dznode.container.checkIntervalMs=" + ms(s.cfg.ContainerCheckInterval) +
				" -Dzookeeper.forceSync=no",
		}),
		testcontainers.WithHostConfigModifier(func(hc *container.HostConfig) {
			hc.PortBindings = network.PortMap{port: {{
				HostIP: netip.MustParseAddr("127.0.0.1"), HostPort: strconv.Itoa(s.cfg.HostPort),
			}}}
		}),
	)
}

func (s *server) Stop() error { return s.stopWithin(stopGrace) }
func (s *server) Kill() error { return s.stopWithin(0) }

func (s *server) stopWithin(grace time.Duration) error {
	ctr := s.container()
	if ctr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), grace+time.Minute)
	defer cancel()
	return ctr.Stop(ctx, &grace)
}

func (s *server) Close() error {
	s.mu.Lock()
	ctr := s.ctr
	s.ctr, s.closed = nil, true
	s.mu.Unlock()
	return terminate(ctr)
}

// terminate removes ctr, if any.
func terminate(ctr *testcontainers.DockerContainer) error {
	if ctr == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	return ctr.Terminate(ctx)
}

func (s *server) Running() bool {
	ctr := s.container()
	return ctr != nil && ctr.IsRunning()
}

func (s *server) Exited() (bool, string) {
	ctr := s.container()
	if ctr == nil || ctr.IsRunning() {
		return false, ""
	}
	return true, "container stopped"
}

func (s *server) LogTail(lines int) string {
	ctr := s.container()
	if ctr == nil {
		return "(no container)"
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	r, err := ctr.Logs(ctx)
	if err != nil {
		return fmt.Sprintf("(no log: %v)", err)
	}
	defer r.Close()
	var b strings.Builder
	_, _ = io.Copy(&b, io.LimitReader(r, 32<<20))
	return lastLines(b.String(), lines)
}

// lastLines returns the last n lines of s.
func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimRight(s, "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
