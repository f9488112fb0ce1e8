// Package docker adds a Docker fallback to package zktest: when a test finds
// neither ZKTEST_SERVERS nor a local ZooKeeper installation, zktest.Start (and
// zktest.Launch) run the official image zookeeper:3.8 through
// testcontainers-go, with its client port published on 127.0.0.1 only.
//
// The package has no API. A test enables the fallback by importing it for
// its side effect, in any one test file of the package under test:
//
//	import _ "github.com/zklock/zklock/zktest/docker"
//
// Without that import zktest links none of Docker's, containerd's or
// OpenTelemetry's packages, which testcontainers-go pulls in.
//
// The Docker engine is found wherever testcontainers-go finds it
// (DOCKER_HOST, ~/.testcontainers.properties, the usual sockets). The
// fallback runs standalone servers only (zktest.StartEnsemble fails) and
// supports Server.Stop, Start and Kill but not Pause and Resume, which
// return zktest.ErrNotSupported; WithJVMFlags and WithSelfSignedTLS do not
// apply. It has been compiled but never run by the project: its machines
// have no Docker engine.
package docker
