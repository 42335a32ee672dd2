# dynafold — the two commands a newcomer runs: `make demo` and `make test`.
GO      ?= go
PLUGINS := order-summary zone-readings shipment-summary
WASM    := $(PLUGINS:%=build/plugins/%.wasm)

.PHONY: all build plugins test test-go conformance-dynalite demo bench check clean FORCE

.DEFAULT_GOAL := all

# Before any rule that names $(AS_WASM): prerequisites expand when read.
include plugins/examples/order-summary-as/build.mk

all: build

## build: the host and Lambda binaries, and the example plugins
build: plugins
	$(GO) build -o build/host ./cmd/host
	CGO_ENABLED=0 GOOS=linux $(GO) build -tags lambda.norpc -o build/bootstrap ./cmd/lambda

## plugins: the example plugins, built from source (go build caches, so this is cheap when nothing changed);
## the AssemblyScript one needs node and npm (npm ci of pinned packages)
plugins: $(WASM) $(AS_WASM)

build/plugins/%.wasm: FORCE
	@mkdir -p build/plugins
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins/examples/$*/wasm

## test: every test, then the DynamoDB conformance suite against dynalite (installed from npm on first use)
test: test-go conformance-dynalite

test-go: plugins
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...

conformance-dynalite:
	bash ddblocal/conformance/dynalite.sh run

## demo: the main job on the embedded default (ddblocal in-process, no AWS account)
demo: build/plugins/order-summary.wasm
	$(GO) run ./cmd/host demo

## bench: the benchmarks recorded in docs/BENCHMARKS.md
bench: plugins
	$(GO) test -run '^$$' -bench . -benchmem -count 1 -timeout 60m ./...

## check: formatting, vet and tidy, failing on any diff
check:
	@test -z "$$(gofmt -l $$(git ls-files '*.go'))" || { gofmt -l $$(git ls-files '*.go'); exit 1; }
	$(GO) vet ./...
	$(GO) mod tidy -diff

clean:
	rm -rf build

FORCE:
