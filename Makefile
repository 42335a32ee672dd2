# dynafold — the two commands a newcomer runs: `make demo` and `make test`.
GO      ?= go
PLUGINS := order-summary zone-readings shipment-summary
WASM    := $(PLUGINS:%=build/plugins/%.wasm)

.PHONY: all build plugins plugin-rs plugin-c test test-go conformance-dynalite conformance-kinesalite demo bench check clean lambda-zip FORCE

.DEFAULT_GOAL := all

# Before any rule that names $(AS_WASM): prerequisites expand when read.
include plugins/examples/order-summary-as/build.mk
include sdk-guest/toolchains.mk
include plugins/examples/order-summary-rs/build.mk
include plugins/examples/order-summary-c/build.mk

all: build

# ARCH is the Lambda function's architecture: arm64 (default) or amd64.
ARCH ?= arm64

## build: the host and Lambda binaries (bootstrap for linux/$(ARCH)), and the example plugins
build: plugins
	$(GO) build -o build/host ./cmd/host
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) $(GO) build -tags lambda.norpc -o build/bootstrap ./cmd/lambda

## lambda-zip: build/lambda-$(ARCH).zip, the function package of docs/deploy: bootstrap, dynafold.json,
## the plugin and its precompiled read-only cache (compiled by a host binary for linux/$(ARCH): natively
## when this machine is linux/$(ARCH), else through EMULATOR, e.g. EMULATOR=qemu-aarch64-static)
LAMBDA_CONFIG ?= docs/deploy/dynafold.json
LAMBDA_DIR    := build/lambda-$(ARCH)
HOST_PLATFORM := $(shell $(GO) env GOHOSTOS)/$(shell $(GO) env GOHOSTARCH)
lambda-zip: build/plugins/order-summary.wasm
	@case "$(ARCH)" in arm64|amd64) ;; *) echo "ARCH=$(ARCH): use arm64 or amd64" >&2; exit 2;; esac
	@if [ "linux/$(ARCH)" != "$(HOST_PLATFORM)" ] && [ -z "$(EMULATOR)" ]; then \
	  echo "lambda-zip: the cache must be compiled by a linux/$(ARCH) host binary; this machine is $(HOST_PLATFORM)." >&2; \
	  echo "  run on a $(ARCH) machine, or set EMULATOR (e.g. EMULATOR=qemu-aarch64-static)" >&2; exit 1; fi
	rm -rf $(LAMBDA_DIR) build/lambda-$(ARCH).zip
	mkdir -p $(LAMBDA_DIR)/plugins
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) $(GO) build -trimpath -tags lambda.norpc -o $(LAMBDA_DIR)/bootstrap ./cmd/lambda
	CGO_ENABLED=0 GOOS=linux GOARCH=$(ARCH) $(GO) build -trimpath -o build/host-linux-$(ARCH) ./cmd/host
	cp $(LAMBDA_CONFIG) $(LAMBDA_DIR)/dynafold.json
	cp build/plugins/order-summary.wasm $(LAMBDA_DIR)/plugins/
	$(EMULATOR) build/host-linux-$(ARCH) plugin precompile --config $(LAMBDA_DIR)/dynafold.json --cache $(LAMBDA_DIR)/cache
	cd $(LAMBDA_DIR) && find . -type f | LC_ALL=C sort | zip -q -X ../lambda-$(ARCH).zip -@
	@echo "build/lambda-$(ARCH).zip: bootstrap, dynafold.json, plugins/, cache/ (linux/$(ARCH))"

## plugins: the example plugins, built from source (go build caches, so this is cheap when nothing changed);
## the AssemblyScript one needs node and npm (npm ci of pinned packages); the Rust and C ones their
## toolchains (sdk-guest/toolchains.mk), and are skipped with one line naming the packages without them
plugins: $(WASM) $(AS_WASM) plugin-rs plugin-c

build/plugins/%.wasm: FORCE
	@mkdir -p build/plugins
	GOOS=wasip1 GOARCH=wasm $(GO) build -buildmode=c-shared -o $@ ./plugins/examples/$*/wasm

## test: every test, then the DynamoDB conformance suite against dynalite and the Kinesis one against
## kinesalite (both installed from npm on first use)
test: test-go conformance-dynalite conformance-kinesalite

test-go: plugins
	$(GO) vet ./...
	$(GO) test -count=1 -timeout 30m ./...
	# the nested module replaces the main one with this tree: tidy first so a
	# requirement the main module gained is picked up (make check shows the diff)
	cd docs/deploy/platforms && $(GO) mod tidy && $(GO) vet ./... && $(GO) test -count=1 ./...

conformance-dynalite:
	bash ddblocal/conformance/dynalite.sh run
	bash ddblocal/conformance/dynalite.sh run-host

conformance-kinesalite:
	bash ddblocal/conformance/kinesalite.sh run

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
	cd docs/deploy/platforms && $(GO) mod tidy -diff

clean:
	rm -rf build

FORCE:
