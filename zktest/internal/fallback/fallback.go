// Package fallback is the hook through which zktest runs ZooKeeper when it
// finds neither ZKTEST_SERVERS nor a local installation.
//
// A backend that needs heavy dependencies (zktest/docker links Docker's
// client through testcontainers-go) lives in a package of its own, which
// imports zktest; zktest therefore cannot import it. Instead the backend
// calls Register from its init function, and zktest.Start asks Registered.
// A test binary gets the backend only when something in it imports the
// backend's package, usually a blank import in one test file:
//
//	import _ "github.com/zklock/zklock/zktest/docker"
//
// so the root package and the zklock command, which import zktest but not
// zktest/docker, link none of it. The package is internal: only packages
// under zktest/ register backends.
package fallback

import (
	"context"
	"fmt"
	"sync"
	"time"
)

// Config is the one standalone server zktest asks a backend for.
type Config struct {
	// HostPort is the client port on 127.0.0.1 where the server must
	// answer. zktest chooses it so that it stays the same across Stop and
	// Start.
	HostPort int

	TickTime          time.Duration // ZooKeeper's tickTime
	MinSessionTimeout time.Duration // minSessionTimeout
	MaxSessionTimeout time.Duration // maxSessionTimeout
	// ContainerCheckInterval is znode.container.checkIntervalMs, a JVM
	// property (in zoo.cfg it has no effect).
	ContainerCheckInterval time.Duration
}

// Backend runs standalone ZooKeeper servers for zktest; ensembles need a
// local installation.
type Backend interface {
	// Name says where the servers come from, for logs and failures, such
	// as "docker zookeeper:3.8".
	Name() string
	// Available returns nil when the backend can run a server now, else
	// why it cannot (for example: no Docker engine answers). ctx bounds
	// the check.
	Available(ctx context.Context) error
	// NewServer returns a server for cfg without starting it.
	NewServer(cfg Config) Server
}

// Server is one server of a Backend; zktest.Server's fault methods call it.
// Its methods are safe for concurrent use: zktest may Close it while a
// Start is in progress (zktest.Launch aborted), and Close must then remove
// what that Start creates. Pause and Resume are not part of it: zktest
// returns ErrNotSupported for them.
type Server interface {
	// Start starts the server, the first time or again after Stop or Kill
	// with the same configuration and data. It returns once the server is
	// started, without waiting for it to serve: zktest polls it.
	Start(ctx context.Context) error
	// Stop stops the server gracefully and waits until it has exited.
	Stop() error
	// Kill stops the server abruptly and waits until it has exited.
	Kill() error
	// Close removes the server and all it holds, whether or not it was
	// started. Later calls do nothing, and a Start after Close fails.
	Close() error
	// Running reports whether the server is running.
	Running() bool
	// Exited reports whether a started server is no longer running, and why.
	Exited() (bool, string)
	// LogTail returns the last lines of the server's output, or a note
	// saying why there is none.
	LogTail(lines int) string
}

var (
	mu         sync.Mutex
	registered Backend
)

// Register makes b the fallback backend of every zktest.Start in the
// program. It is meant for an init function; it panics when b is nil or a
// backend is already registered, since zktest would otherwise have to
// guess which one a test meant.
func Register(b Backend) {
	if b == nil {
		panic("zktest/internal/fallback: Register(nil)")
	}
	mu.Lock()
	defer mu.Unlock()
	if registered != nil {
		panic(fmt.Sprintf("zktest/internal/fallback: %s registered, %s too", registered.Name(), b.Name()))
	}
	registered = b
}

// Registered returns the registered backend, or nil when none is.
func Registered() Backend {
	mu.Lock()
	defer mu.Unlock()
	return registered
}
