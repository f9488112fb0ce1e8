// Package pgtest runs a throwaway PostgreSQL server for tests: initdb into a
// temporary directory, then the server on 127.0.0.1 with a free port and its
// Unix socket in that directory, trust authentication for the superuser
// postgres, and everything removed when it stops.
//
// It uses the server binaries it finds (PGTEST_BINDIR, initdb on PATH, or
// Debian's /usr/lib/postgresql/NN/bin, newest first); without any it fails
// with instructions, never skips. A root process runs the server as the
// postgres account (PostgreSQL refuses root). On Linux the server is killed
// if the test binary dies first.
package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// Timeouts: the whole start (initdb, then the server ready), and a fast
// shutdown before SIGKILL.
const (
	startTimeout = 2 * time.Minute
	stopGrace    = 20 * time.Second
	bindAttempts = 5 // a free port can be taken between our probe and the server's bind
)

// Server is one PostgreSQL server. Its methods are safe for concurrent use;
// it must not be copied.
type Server struct {
	bin  string // directory of initdb, postgres, psql
	dir  string // the temporary directory: data/, the socket, postgres.log
	port int
	as   *account

	mu   sync.Mutex
	cmd  *exec.Cmd
	done chan struct{} // closed once cmd has been reaped
}

// Option configures a server.
type Option func(*options)

type options struct{ fsync bool }

// WithFsync makes the server flush its write-ahead log to disk at every
// commit, as PostgreSQL does by default. The default here is fsync=off:
// faster, and safe for a server whose data dies with the test.
func WithFsync() Option { return func(o *options) { o.fsync = true } }

// Start starts a server for t and waits until it accepts connections; it is
// stopped and its directory removed by t.Cleanup. It fails the test
// (t.Fatal, never Skip) when the server cannot be started.
func Start(t testing.TB, opts ...Option) *Server {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	s, err := Launch(ctx, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("pgtest: the server's log:\n%s", s.LogTail(40))
		}
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Launch starts a server as Start does, without a testing.TB, for programs
// and TestMain: the caller stops it with Close. ctx bounds the start.
func Launch(ctx context.Context, opts ...Option) (*Server, error) {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	bin, err := findBinDir()
	if err != nil {
		return nil, err
	}
	as, err := serverUser()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "pgtest-")
	if err != nil {
		return nil, err
	}
	s := &Server{bin: bin, dir: dir, as: as}
	if err := s.start(ctx, o); err != nil {
		tail := s.LogTail(20)
		_ = s.Close()
		return nil, fmt.Errorf("%w\n%s", err, tail)
	}
	return s, nil
}

func (s *Server) start(ctx context.Context, o options) error {
	if err := chown(s.dir, s.as); err != nil {
		return fmt.Errorf("pgtest: %w", err)
	}
	if err := s.initdb(ctx); err != nil {
		return err
	}
	for attempt := 1; ; attempt++ {
		err := s.serve(ctx, o)
		if err == nil || !errors.Is(err, errBind) || attempt == bindAttempts {
			return err
		}
	}
}

// initdb makes the cluster: trust authentication (only this machine's
// tests reach it), the C locale (no dependency on the machine's locales),
// no fsync of the new files.
func (s *Server) initdb(ctx context.Context) error {
	cmd := exec.CommandContext(ctx, filepath.Join(s.bin, "initdb"), "-D", s.dataDir(),
		"-A", "trust", "-U", "postgres", "-E", "UTF8", "--locale=C", "--no-sync")
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = sysProcAttr(s.as)
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("pgtest: initdb: %v\n%s", err, out)
	}
	return nil
}

// Addr returns the server's TCP address, "127.0.0.1:port".
func (s *Server) Addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(s.port)) }

// Port returns the server's TCP port (its Unix socket's name carries it too).
func (s *Server) Port() int { return s.port }

// SocketDir returns the directory of the server's Unix socket.
func (s *Server) SocketDir() string { return s.dir }

// BinDir returns the directory of the server's binaries, where psql and the
// other tools of the same version are found too.
func (s *Server) BinDir() string { return s.bin }

// DSN returns a keyword/value connection string for database postgres as
// the superuser postgres over TCP, which pgx, lib/pq and psql all accept.
func (s *Server) DSN() string {
	return fmt.Sprintf("host=127.0.0.1 port=%d user=postgres dbname=postgres sslmode=disable", s.port)
}

func (s *Server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *Server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// LogTail returns the last n lines of the server's log.
func (s *Server) LogTail(n int) string {
	b, err := os.ReadFile(s.logPath())
	if err != nil {
		return ""
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
