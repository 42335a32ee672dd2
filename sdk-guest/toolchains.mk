# The toolchains of the Rust and C guest SDKs, found as the tests find them
# (internal/wasmbuild): included by the top Makefile.
#
# Rust: Debian's /usr/bin/cargo and /usr/bin/rustc 1.63 with
# libstd-rust-dev-wasm32 (target wasm32-wasi) first, else the cargo and
# rustc on PATH with rustup's wasm32-wasip1 (or wasm32-wasi) target.
# rustup's cargo does not drive Debian's rustc, so they come in pairs.
RUST_PACKAGES := rustc cargo libstd-rust-dev-wasm32
ifeq ($(origin RUST_TOOLCHAIN),undefined)
RUST_TOOLCHAIN := $(shell for p in "/usr/bin/cargo /usr/bin/rustc" "cargo rustc"; do \
	set -- $$p; command -v $$1 >/dev/null 2>&1 && command -v $$2 >/dev/null 2>&1 || continue; \
	r=$$($$2 --print sysroot 2>/dev/null) || continue; \
	for t in wasm32-wasip1 wasm32-wasi; do [ -d "$$r/lib/rustlib/$$t/lib" ] && { echo "$$1 $$2 $$t"; exit 0; }; done; done)
endif
CARGO       = $(word 1,$(RUST_TOOLCHAIN))
RUSTC       = $(word 2,$(RUST_TOOLCHAIN))
RUST_TARGET = $(word 3,$(RUST_TOOLCHAIN))

# C: clang for wasm32-wasi with wasi-libc and compiler-rt's builtins
# (WASM_CC=/path/to/wasi-sdk/bin/clang elsewhere).
C_PACKAGES := clang lld wasi-libc libclang-rt-dev-wasm32
WASM_CC ?= clang
WASM_CFLAGS ?= --target=wasm32-wasi -mexec-model=reactor -std=c11 -O2 -Wall -Wextra -Wl,--strip-debug
ifeq ($(origin C_TOOLCHAIN),undefined)
C_TOOLCHAIN := $(shell printf '__attribute__((export_name("f"))) int f(int n) { volatile unsigned __int128 x = (unsigned)n; return (int)(x / 7); }\n__attribute__((weak)) unsigned long __stack_chk_guard; __attribute__((weak)) void __stack_chk_fail(void) {}\n' \
	| $(WASM_CC) $(WASM_CFLAGS) -x c -o /dev/null - >/dev/null 2>&1 && echo ok)
endif
