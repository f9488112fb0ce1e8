package pgtest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"
)

// errBind: the server could not listen on the port we picked.
var errBind = errors.New("pgtest: port taken")

// pollEvery is how often the start looks at postmaster.pid.
const pollEvery = 10 * time.Millisecond

// serve starts the server on a free port (run as our child rather than
// daemonized by pg_ctl, so that the parent-death signal reaches it) and
// waits until it is ready.
func (s *Server) serve(ctx context.Context, o options) error {
	port, err := freePort()
	if err != nil {
		return err
	}
	log, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer log.Close() // the child has its own descriptor
	fsync := "off"
	if o.fsync {
		fsync = "on"
	}
	cmd := exec.Command(filepath.Join(s.bin, "postgres"), "-D", s.dataDir(),
		"-p", fmt.Sprint(port), "-h", "127.0.0.1", "-k", s.dir,
		"-c", "fsync="+fsync, "-c", "max_connections=200")
	cmd.Stdout, cmd.Stderr = log, log
	cmd.Env = append(os.Environ(), "LC_ALL=C")
	cmd.SysProcAttr = sysProcAttr(s.as)
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("pgtest: start postgres: %w", err)
	}
	done := make(chan struct{})
	go func() {
		_ = cmd.Wait()
		close(done)
	}()
	s.mu.Lock()
	s.cmd, s.done, s.port = cmd, done, port
	s.mu.Unlock()
	return s.waitReady(ctx, done)
}

// waitReady waits for the status line of postmaster.pid (its 8th) to say
// "ready": the server writes it once it accepts connections, which is what
// pg_ctl -w waits for too.
func (s *Server) waitReady(ctx context.Context, done <-chan struct{}) error {
	t := time.NewTicker(pollEvery)
	defer t.Stop()
	for {
		if b, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid")); err == nil {
			if lines := strings.Split(string(b), "\n"); len(lines) > 7 && strings.TrimSpace(lines[7]) == "ready" {
				return nil
			}
		}
		select {
		case <-done:
			if strings.Contains(s.LogTail(20), "could not bind") {
				return errBind
			}
			return errors.New("pgtest: postgres exited while starting")
		case <-ctx.Done():
			return fmt.Errorf("pgtest: postgres not ready: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// freePort asks the kernel for a free port on 127.0.0.1. It is free when we
// close our listener; serve retries if the server loses it to someone else.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// Close stops the server (a fast shutdown: open transactions are rolled
// back; SIGKILL after 20 s) and removes its directory. It may be called more
// than once.
func (s *Server) Close() error {
	s.mu.Lock()
	cmd, done := s.cmd, s.done
	s.cmd = nil
	s.mu.Unlock()
	var err error
	if cmd != nil {
		err = stop(cmd, done)
	}
	if rmErr := os.RemoveAll(s.dir); err == nil {
		err = rmErr
	}
	return err
}

// stop sends SIGINT, PostgreSQL's fast shutdown, then SIGKILL after
// stopGrace, and waits for the exit.
func stop(cmd *exec.Cmd, done <-chan struct{}) error {
	_ = cmd.Process.Signal(os.Interrupt)
	select {
	case <-done:
		return nil
	case <-time.After(stopGrace):
	}
	_ = cmd.Process.Kill()
	select {
	case <-done:
		return fmt.Errorf("pgtest: postgres ignored SIGINT for %v: killed", stopGrace)
	case <-time.After(stopGrace):
		return fmt.Errorf("pgtest: postgres (pid %d) still running after SIGKILL", cmd.Process.Pid)
	}
}
