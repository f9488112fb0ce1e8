# zklock's build. `make test` is what CI runs (.ci/run).

# scripts/install-deps.sh installs staticcheck here.
STATICCHECK := $(shell go env GOPATH)/bin/staticcheck

.PHONY: deps lint test demo

# Install ZooKeeper, Java and staticcheck where missing (apt; sudo unless root).
deps:
	bash scripts/install-deps.sh

lint: deps
	go vet ./...
	$(STATICCHECK) ./...

test: lint
	go test -race -count=1 -timeout 14m ./...

# Start a throwaway ZooKeeper (or use ZK_SERVERS) and show five workers
# taking turns on one Mutex, with their fencing tokens.
demo: deps
	go run ./examples/quickstart
