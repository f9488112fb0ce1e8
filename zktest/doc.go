// Package zktest runs real ZooKeeper servers for tests and puts real faults
// between them and their clients.
//
// Start gives a test a standalone server and StartEnsemble an ensemble of n
// servers, all on 127.0.0.1 with free ports and a temporary directory each;
// t.Cleanup tears them down, and when the test has failed it first logs the
// last 60 lines of every server's log. A Server can be stopped, killed,
// restarted with its data, paused and resumed. Cluster reads the servers'
// state through four-letter words: Leader, WaitReady, Mntr, SessionAlive,
// and the watches clients have set (WatchCount, Watches), which a test
// waits for instead of sleeping.
//
// A Proxy stands between a client and the servers to cut, delay or
// blackhole the network, or to lose the reply to one request; ExpireSession
// uses it to make the server expire a client's session for real.
//
// WithPeerNetwork routes an ensemble's quorum and election traffic through
// proxies zktest owns, one per ordered pair of servers, so that a test can
// cut the servers from each other: Cluster.Isolate, Partition, CutOneWay
// and SetPeerLatency, undone by HealNetwork. WaitReady then waits for the
// side that can form a quorum.
//
// Launch starts servers the same way without a testing.TB, for programs
// (the zklock dev-server command, benchmarks, examples): the caller stops
// them with Cluster.Close.
//
// WithSelfSignedTLS gives every server a TLS client port too, with
// certificates made for the test: Cluster.SecureServers and
// Cluster.TLSConfig are what a client needs to reach it (Cluster.TLSFiles
// the same as PEM files).
//
// # Where ZooKeeper comes from
//
// Start and StartEnsemble look, in this order, for:
//
//  1. ZKTEST_SERVERS, a comma-separated list of host:port of running servers.
//     The Cluster is then External: zktest does not manage those servers,
//     so their fault methods return ErrUnmanaged, and its timing (tickTime,
//     session timeouts) is read from the server with 'conf'.
//  2. A local installation, run as one JVM per server: $ZOOKEEPER_HOME (the
//     Apache binary tarball layout, $ZOOKEEPER_HOME/lib/*.jar and
//     $ZOOKEEPER_HOME/*.jar), else Debian's zookeeper package
//     (/usr/share/java/zookeeper.jar). java is $JAVA_HOME/bin/java or the
//     one on PATH. This is what the project's own tests use: install it with
//     sudo scripts/install-deps.sh.
//  3. A Docker engine, through testcontainers-go, running the image
//     zookeeper:3.8 with its client port published on 127.0.0.1, if the test
//     binary links the Docker fallback (below). It runs standalone servers
//     only, supports Stop, Start and Kill but not Pause, and has been
//     compiled but never run by the project (its machines have no Docker
//     engine).
//
// Otherwise the test fails, never skips, with a message saying how to
// install one or enable the Docker fallback.
//
// The Docker fallback is package zktest/docker, which zktest does not
// import, so that a program importing zktest (the zklock command does)
// links no Docker, containerd or OpenTelemetry packages. A test enables it
// with a blank import in any one test file of the package under test:
//
//	import _ "github.com/zklock/zklock/zktest/docker"
//
// # Timing
//
// Managed servers use a tickTime of 100ms and grant sessions of 200ms to 2s
// (ZooKeeper's 2 to 20 ticks) unless WithTickTime or WithSessionTimeouts say
// otherwise; a client asking for a longer session gets 2s, so a session
// expires about 2s after its client falls silent. Empty CONTAINER nodes are
// reaped every second (WithContainerCheckInterval). Ensembles use
// initLimit=50 and syncLimit=15 ticks. Writes are not fsynced
// (zookeeper.forceSync=no) unless WithFsync says so: the data survives a
// server restart but not a machine crash, which tests do not need. On an
// idle two-core machine a standalone server serves about half a second
// after its JVM is launched and
// a three-server ensemble has a leader after about a second and a half; a
// busy machine can double or triple that (Cluster.StartupTime tells).
//
// Local servers share a class data archive of ZooKeeper's classes, made by
// the first server start that finds none (a throwaway server, a few
// seconds) and kept in the user's cache directory (os.UserCacheDir, then
// zktest/): it cuts a JVM's start from 0.7 to about 0.5 CPU-seconds.
// ZKTEST_CDS=0 (EnvCDS) turns it off.
//
// Every wait in this package is bounded: by the caller's context, and by a
// documented limit when the context has no deadline.
package zktest
