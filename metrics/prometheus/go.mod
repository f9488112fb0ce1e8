module github.com/zklock/zklock/metrics/prometheus

go 1.24.0

require (
	github.com/prometheus/client_golang v1.23.2
	github.com/prometheus/client_model v0.6.2
	github.com/stretchr/testify v1.12.1
	github.com/zklock/zklock v0.0.0-20261126161104-1e504b70e496
	go.uber.org/goleak v1.3.0
)

require (
	github.com/beorn7/perks v1.0.1 // indirect
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/kr/text v0.2.0 // indirect
	github.com/munnerz/goautoneg v0.0.0-20191010083416-a7dc8b61c822 // indirect
	github.com/prometheus/common v0.66.1 // indirect
	github.com/prometheus/procfs v0.16.1 // indirect
	go.yaml.in/yaml/v2 v2.4.2 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.41.0 // indirect
	google.golang.org/protobuf v1.36.8 // indirect
)

// Builds in this repository use the root module beside it (a replace
// applies only here); importers get the version required above: the
// repository has no tag yet, so it is the pseudo-version of a commit on
// main (1e504b7), which the go command resolves without one. Raise it when
// this module needs a newer root API.
replace github.com/zklock/zklock => ../..
