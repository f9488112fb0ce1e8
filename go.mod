module github.com/zklock/zklock

go 1.26.8

require (
	github.com/cenkalti/backoff/v4 v4.3.0
	github.com/go-zookeeper/zk v1.0.4
	github.com/stretchr/testify v1.12.1
	go.uber.org/goleak v1.3.0
	golang.org/x/sys v0.49.0
)

require go.yaml.in/yaml/v3 v3.0.5 // indirect

// go-zookeeper v1.0.4 with its lastZxid data race fixed (upstream PR #35):
// see third_party/go-zookeeper-zk/PATCHED.md.
replace github.com/go-zookeeper/zk => ./third_party/go-zookeeper-zk
