# zklock's build. `make test` is what CI runs (.ci/run).

# scripts/install-deps.sh installs staticcheck here.
STATICCHECK := $(shell go env GOPATH)/bin/staticcheck

.PHONY: deps lint test

# Install ZooKeeper, Java and staticcheck where missing (apt; sudo unless root).
deps:
	bash scripts/install-deps.sh

lint: deps
	go vet ./...
	$(STATICCHECK) ./...

test: lint
	go test -race -count=1 -timeout 14m ./...
