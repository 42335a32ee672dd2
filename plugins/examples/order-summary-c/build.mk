# The C order-summary plugin: build/plugins/order-summary-c.wasm, with the
# clang sdk-guest/toolchains.mk found; without one, one line says what to
# install and the build goes on.
C_DIR  := plugins/examples/order-summary-c
C_WASM := build/plugins/order-summary-c.wasm
C_SRC  := $(C_DIR)/order_summary.c $(C_DIR)/order_summary.h sdk-guest/c/dynafold.c sdk-guest/c/dynafold.h

.PHONY: plugin-c
## plugin-c: the C order-summary plugin (clang, wasm32-wasi reactor), build/plugins/order-summary-c.wasm
plugin-c:
	@if [ -z "$(C_TOOLCHAIN)" ]; then \
	  echo "skipping $(C_WASM): no C toolchain for wasm32-wasi (Debian/Ubuntu: apt-get install $(C_PACKAGES); elsewhere: WASM_CC=/path/to/wasi-sdk/bin/clang)"; \
	else \
	  mkdir -p build/plugins && \
	  $(WASM_CC) $(WASM_CFLAGS) -I sdk-guest/c -o $(C_WASM) $(C_DIR)/order_summary.c sdk-guest/c/dynafold.c && echo "built $(C_WASM)"; \
	fi
