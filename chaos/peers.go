package chaos

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/zklock/zklock/internal/peerlib"
	"github.com/zklock/zklock/zktest"
)

// Libraries of peer workers (Event.Lib); zklock's workers leave it empty.
const (
	LibCurator = "curator"
	LibKazoo   = "kazoo"
)

// EnvSessionMS gives a worker its session timeout in milliseconds.
const EnvSessionMS = "ZKLOCK_CHAOS_SESSION_MS"

// Where Debian's packages put what the peer workers need.
const (
	curatorJar = peerlib.CuratorJar
	slf4jNop   = peerlib.Slf4jNop
	python     = peerlib.Python
)

// sourceDir is this package's directory, where the peer workers' sources
// are.
func sourceDir() string {
	_, self, _, _ := runtime.Caller(0)
	return filepath.Dir(self)
}

var (
	javaTool   = peerlib.JavaTool
	fileExists = peerlib.Exists
)

// curatorCommand compiles java/CuratorWorker.java into dir and returns the
// command that runs it.
func curatorCommand(ctx context.Context, dir string) ([]string, error) {
	javac, err := javaTool("javac")
	if err != nil {
		return nil, fmt.Errorf("%w (a JDK is needed for Curator workers: make deps)", err)
	}
	java, err := javaTool("java")
	if err != nil {
		return nil, err
	}
	if !fileExists(curatorJar) {
		return nil, fmt.Errorf("%s is missing (Debian package libcurator-recipes-java: make deps)", curatorJar)
	}
	src := filepath.Join(sourceDir(), "java", "CuratorWorker.java")
	ctx, cancel := context.WithTimeout(ctx, 2*time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, javac, "-Xlint:all,-path", "-Werror", "-cp", curatorJar, "-d", dir, src).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("javac %s: %v\n%s", src, err, out)
	}
	cp := []string{dir, curatorJar}
	if fileExists(slf4jNop) {
		cp = append(cp, slf4jNop)
	}
	return []string{java, "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m", "-Xss512k",
		"-cp", strings.Join(cp, string(os.PathListSeparator)), "CuratorWorker"}, nil
}

// kazooCommand checks that Debian's python3 imports Kazoo and returns the
// command that runs python/kazoo_worker.py.
func kazooCommand(ctx context.Context) ([]string, error) {
	ctx, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, python, "-c", "import kazoo").CombinedOutput()
	var ee *exec.ExitError
	switch {
	case errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist):
		return nil, fmt.Errorf("%s is missing (make deps)", python)
	case errors.As(err, &ee):
		return nil, fmt.Errorf("%s cannot import kazoo (Debian package python3-kazoo: make deps): %s", python, strings.TrimSpace(string(out)))
	case err != nil:
		return nil, err
	}
	return []string{python, filepath.Join(sourceDir(), "python", "kazoo_worker.py")}, nil
}

// sessionMS is a worker's session timeout setting.
func sessionMS(d time.Duration) string { return strconv.FormatInt(d.Milliseconds(), 10) }

// startPeers starts the Curator and Kazoo workers.
func (c *coordinator) startPeers(ctx context.Context, t testing.TB) error {
	c.procs.peers = map[string][]string{}
	for _, p := range []struct {
		lib string
		n   int
		cmd func() ([]string, error)
	}{
		{LibCurator, c.cfg.Curator, func() ([]string, error) { return curatorCommand(ctx, filepath.Join(c.cfg.Dir, "classes")) }},
		{LibKazoo, c.cfg.Kazoo, func() ([]string, error) { return kazooCommand(ctx) }},
	} {
		if p.n == 0 {
			continue
		}
		cmd, err := p.cmd()
		if err != nil {
			return err
		}
		c.procs.peers[p.lib] = cmd
		for i := 1; i <= p.n; i++ {
			w := &worker{id: i, lib: p.lib, proxy: zktest.NewProxy(t, c.cluster.Servers())}
			if err := c.procs.start(w); err != nil {
				return err
			}
			t.Cleanup(func() { c.procs.kill(w, "") })
			c.workers = append(c.workers, w)
		}
	}
	return nil
}
