module github.com/zklock/zklock/metrics/otel

go 1.24.0

require (
	github.com/stretchr/testify v1.12.1
	github.com/zklock/zklock v0.0.0-20261126161104-1e504b70e496
	go.opentelemetry.io/otel v1.40.0
	go.opentelemetry.io/otel/metric v1.40.0
	go.opentelemetry.io/otel/sdk/metric v1.40.0
	go.uber.org/goleak v1.3.0
)

require (
	github.com/cenkalti/backoff/v4 v4.3.0 // indirect
	github.com/cespare/xxhash/v2 v2.3.0 // indirect
	github.com/go-logr/logr v1.4.3 // indirect
	github.com/go-logr/stdr v1.2.2 // indirect
	github.com/google/uuid v1.6.0 // indirect
	go.opentelemetry.io/auto/sdk v1.2.1 // indirect
	go.opentelemetry.io/otel/sdk v1.40.0 // indirect
	go.opentelemetry.io/otel/trace v1.40.0 // indirect
	go.yaml.in/yaml/v3 v3.0.5 // indirect
	golang.org/x/sys v0.41.0 // indirect
)

// Builds in this repository use the root module beside it (a replace
// applies only here); importers get the version required above: the
// repository has no tag yet, so it is the pseudo-version of a commit on
// main (1e504b7), which the go command resolves without one. Raise it when
// this module needs a newer root API.
replace github.com/zklock/zklock => ../..
