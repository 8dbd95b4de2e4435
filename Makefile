GO ?= go
BIN := bin/harness

.PHONY: build test vet lint fuzz install bench
build:
	$(GO) build -o $(BIN) ./cmd/harness

vet:
	$(GO) vet ./...

test: vet
	$(GO) test -race -count=1 ./...
