package zktest

import (
	"context"
	"sync"
)

// logLines is how much of its log Server.Log returns.
const logLines = 200

// Server is one server of a Cluster, with the faults that can be done to it.
// Its identity (address, ports, data directory) survives Stop and Start, so a
// restarted server comes back with its data and rejoins its ensemble. Its
// methods are safe for concurrent use. For a cluster from ZKTEST_SERVERS every
// fault method returns ErrUnmanaged.
type Server struct {
	c     *Cluster
	index int
	addr  string
	ctl   control

	secureAddr string // TLS client address, with WithSelfSignedTLS

	mu     sync.Mutex
	paused bool
}

// Addr returns the client address, "127.0.0.1:port".
func (s *Server) Addr() string { return s.addr }

// SecureAddr returns the TLS client address, "127.0.0.1:port", or "" unless
// the cluster was started with WithSelfSignedTLS.
func (s *Server) SecureAddr() string { return s.secureAddr }

// Stop stops the server gracefully (SIGTERM, or a container stop) and waits
// until it has exited; after 20s it is killed. Stopping a stopped server does
// nothing. Clients see their connection closed; their sessions stay alive
// on the rest of an ensemble until they time out.
func (s *Server) Stop() error {
	defer s.setPaused(false)
	return s.ctl.stop()
}

// Kill kills the server abruptly (SIGKILL) and waits until it has exited.
func (s *Server) Kill() error {
	defer s.setPaused(false)
	return s.ctl.kill()
}

// Start restarts a stopped or killed server with the same configuration and
// data, and waits until it answers 'ruok'; if a majority of the ensemble is
// running, it also waits until the server has rejoined and serves. The wait
// is bounded by WithStartTimeout. Use Cluster.WaitReady to wait for a whole
// ensemble after restarting several servers.
func (s *Server) Start() error {
	if err := s.ctl.launch(); err != nil {
		return err
	}
	s.setPaused(false)
	ctx, cancel := context.WithTimeout(context.Background(), s.c.opts.startTimeout)
	defer cancel()
	return s.c.waitServerUp(ctx, s.index, s.c.quorumRunning())
}

// Pause freezes the server (SIGSTOP): its sockets stay open but it answers
// nothing, like a long GC pause or a hung machine. On Linux it returns once
// every thread of the server has stopped, so a request sent afterwards gets
// no answer. Resume undoes it.
func (s *Server) Pause() error {
	if err := s.ctl.pause(); err != nil {
		return err
	}
	s.setPaused(true)
	return nil
}

// Resume lets a paused server run again (SIGCONT).
func (s *Server) Resume() error {
	if err := s.ctl.resume(); err != nil {
		return err
	}
	s.setPaused(false)
	return nil
}

// Running reports whether the server process is alive; a paused server is
// running. An external server is assumed to be running.
func (s *Server) Running() bool { return s.ctl.running() }

// Paused reports whether the server has been paused and not resumed.
func (s *Server) Paused() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.paused
}

// Log returns the last 200 lines of the server's output (all of its runs,
// each starting with a "=== zktest: start" line), or a note saying why there
// is none.
func (s *Server) Log() string { return s.ctl.logTail(logLines) }

func (s *Server) setPaused(p bool) {
	s.mu.Lock()
	s.paused = p
	s.mu.Unlock()
}

// answering reports whether the server should answer requests: running and
// not paused.
func (s *Server) answering() bool { return s.Running() && !s.Paused() }
