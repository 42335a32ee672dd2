# The Rust order-summary plugin: build/plugins/order-summary-rs.wasm, with
# the toolchain sdk-guest/toolchains.mk found; without one, one line says
# what to install and the build goes on.
RS_DIR  := plugins/examples/order-summary-rs
RS_WASM := build/plugins/order-summary-rs.wasm

.PHONY: plugin-rs
## plugin-rs: the Rust order-summary plugin (cargo build --release), build/plugins/order-summary-rs.wasm
plugin-rs:
	@if [ -z "$(RUST_TOOLCHAIN)" ]; then \
	  echo "skipping $(RS_WASM): no Rust toolchain for wasm32-wasi (Debian/Ubuntu: apt-get install $(RUST_PACKAGES); elsewhere: rustup target add wasm32-wasip1)"; \
	else \
	  mkdir -p build/plugins && \
	  RUSTC=$(RUSTC) $(CARGO) build --quiet --release --offline --target $(RUST_TARGET) \
	    --manifest-path $(RS_DIR)/Cargo.toml --target-dir build/cargo && \
	  cp build/cargo/$(RUST_TARGET)/release/order_summary_rs.wasm $(RS_WASM) && echo "built $(RS_WASM) ($(RUST_TARGET))"; \
	fi
