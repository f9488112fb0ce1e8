package zktest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/zklock/zklock/zktest/internal/fallback"
)

// useFallback makes b the fallback backend until t ends; nil means none.
func useFallback(t *testing.T, b fallback.Backend) {
	saved := fallbackBackend
	fallbackBackend = func() fallback.Backend { return b }
	t.Cleanup(func() { fallbackBackend = saved })
}

// TestFallback takes Start and Launch through a fallback backend, the path
// of zktest/docker, with a backend that runs the local installation
// instead: the project's machines have no Docker engine.
func TestFallback(t *testing.T) {
	in, err := findInstall()
	require.NoError(t, err, "the tests need a local installation")
	t.Setenv(EnvServers, "")
	t.Setenv("ZOOKEEPER_HOME", t.TempDir()) // no local installation for zktest
	b := &localBackend{in: in}
	useFallback(t, b)
	ctx, cancel := context.WithTimeout(context.Background(), launchLimit)
	defer cancel()

	t.Run("standalone", func(t *testing.T) {
		b.dir = t.TempDir()
		c := Start(t, WithSessionTimeouts(300*time.Millisecond, 3*time.Second))
		conf, err := c.FourLetter(ctx, 0, "conf")
		require.NoError(t, err)
		assert.Contains(t, conf, "maxSessionTimeout=3000", "the options reach the backend")
		assert.Positive(t, c.StartupTime())
		s := c.Server(0)
		assert.ErrorIs(t, s.Pause(), ErrNotSupported)
		assert.ErrorIs(t, s.Resume(), ErrNotSupported)
		require.NoError(t, s.Stop())
		assert.False(t, s.Running())
		require.NoError(t, s.Start())
		_, err = c.Leader(ctx)
		assert.NoError(t, err, "serves again after Stop and Start")
	})
	t.Run("ensemble", func(t *testing.T) {
		_, err := Launch(ctx, 3)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "local backend runs standalone servers only")
	})
	t.Run("unavailable", func(t *testing.T) {
		b.unavailable = errors.New("engine gone")
		_, err := Launch(ctx, 1)
		require.Error(t, err)
		assert.Contains(t, err.Error(), "no ZooKeeper to run")
		assert.Contains(t, err.Error(), "local backend: engine gone")
		assert.Contains(t, err.Error(), dockerImport)
	})
}

// localBackend is a fallback.Backend running the local installation.
type localBackend struct {
	in          *install
	dir         string // of the next server
	unavailable error
}

func (b *localBackend) Name() string                    { return "local backend" }
func (b *localBackend) Available(context.Context) error { return b.unavailable }

func (b *localBackend) NewServer(cfg fallback.Config) fallback.Server {
	o := options{
		tickTime:          cfg.TickTime,
		minSession:        cfg.MinSessionTimeout,
		maxSession:        cfg.MaxSessionTimeout,
		containerInterval: cfg.ContainerCheckInterval,
		fourLetterWords:   "*", // as zktest/docker's containers (ZOO_4LW_COMMANDS_WHITELIST)
	}
	n := &node{id: 1, dir: b.dir, clientPort: cfg.HostPort}
	return &localServer{opts: o, n: n, p: &process{in: b.in, opts: o, n: n}}
}

type localServer struct {
	opts options
	n    *node
	p    *process
}

func (s *localServer) Start(context.Context) error {
	if err := writeConfig(s.opts, nil, nil, []*node{s.n}, 0); err != nil {
		return err
	}
	return s.p.launch()
}

func (s *localServer) Stop() error              { return s.p.stop() }
func (s *localServer) Kill() error              { return s.p.kill() }
func (s *localServer) Close() error             { return s.p.teardown() }
func (s *localServer) Running() bool            { return s.p.running() }
func (s *localServer) Exited() (bool, string)   { return s.p.exited() }
func (s *localServer) LogTail(lines int) string { return s.p.logTail(lines) }
