package zktest

import "errors"

// ErrUnmanaged is returned by the fault-injection methods of a Server that
// zktest does not run itself (from ZKTEST_SERVERS): stopping, killing or pausing
// it needs a managed server.
var ErrUnmanaged = errors.New("zktest: server is not managed by zktest (ZKTEST_SERVERS): fault injection needs a local ZooKeeper installation or Docker")

// ErrNoLeader is returned by Cluster.Leader when no running server reports
// itself as leader or standalone.
var ErrNoLeader = errors.New("zktest: no server is leader")

// ErrNoSessionDump is returned by Cluster.SessionAlive when the leader's
// 'dump' output does not list sessions (a server that is not the session
// tracker, or a version with another format).
var ErrNoSessionDump = errors.New("zktest: the leader's dump does not list sessions")

// ErrNotSupported is returned by the methods a server run by the Docker
// fallback (zktest/docker) cannot do: Pause and Resume.
var ErrNotSupported = errors.New("zktest: not supported for this server")

// ErrNoPeerNetwork is returned by Cluster.Partition, Isolate, CutOneWay,
// SetPeerLatency and HealNetwork for a cluster started without
// WithPeerNetwork, or a standalone server.
var ErrNoPeerNetwork = errors.New("zktest: the cluster has no peer network: start an ensemble with WithPeerNetwork")
