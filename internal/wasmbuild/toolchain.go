package wasmbuild

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
)

// The packages that install the Rust and C toolchains for Wasm guests on
// Debian and Ubuntu; the skip lines and errors name them.
const (
	RustPackages = "rustc cargo libstd-rust-dev-wasm32"
	CPackages    = "clang lld wasi-libc libclang-rt-dev-wasm32"
)

// ErrNoRust reports that no Rust toolchain with a wasm32-wasi(p1) standard
// library is installed.
var ErrNoRust = errors.New("no Rust toolchain for wasm32-wasi: install " + RustPackages +
	" (Debian/Ubuntu: apt-get install " + RustPackages + "; elsewhere: rustup target add wasm32-wasip1)")

// ErrNoC reports that clang cannot build a wasm32-wasi reactor module.
var ErrNoC = errors.New("no C toolchain for wasm32-wasi: install " + CPackages +
	" (Debian/Ubuntu: apt-get install " + CPackages + "; elsewhere: wasi-sdk, with WASM_CC=/path/to/wasi-sdk/bin/clang)")

// Rust is the Rust toolchain that builds guests: a cargo, the rustc it
// drives, and the Wasm target whose standard library that rustc has.
type Rust struct {
	Cargo, Rustc, Rustdoc string
	Target                string // wasm32-wasi (Debian's rustc 1.63) or wasm32-wasip1 (rustup)
}

var (
	rustOnce sync.Once
	rustTC   Rust
	rustErr  error
	cOnce    sync.Once
	cTC      string
	cErr     error
)

// FindRust returns the Rust toolchain: Debian's /usr/bin/cargo and
// /usr/bin/rustc with libstd-rust-dev-wasm32 first (rustup's newer cargo
// does not drive Debian's rustc 1.63), else the cargo and rustc on PATH
// with rustup's wasm32-wasip1 (or wasm32-wasi) target; else ErrNoRust.
func FindRust() (Rust, error) {
	rustOnce.Do(func() { rustTC, rustErr = findRust() })
	return rustTC, rustErr
}

// rustCandidates are the cargo, rustc and rustdoc FindRust tries, in order.
var rustCandidates = [][3]string{{"/usr/bin/cargo", "/usr/bin/rustc", "/usr/bin/rustdoc"}, {"cargo", "rustc", "rustdoc"}}

func findRust() (Rust, error) {
	for _, pair := range rustCandidates {
		cargo, err1 := exec.LookPath(pair[0])
		rustc, err2 := exec.LookPath(pair[1])
		if err1 != nil || err2 != nil {
			continue
		}
		out, err := exec.Command(rustc, "--print", "sysroot").Output()
		if err != nil {
			continue
		}
		root := strings.TrimSpace(string(out))
		for _, target := range []string{"wasm32-wasip1", "wasm32-wasi"} {
			if st, err := os.Stat(filepath.Join(root, "lib", "rustlib", target, "lib")); err == nil && st.IsDir() {
				rustdoc, _ := exec.LookPath(pair[2])
				return Rust{Cargo: cargo, Rustc: rustc, Rustdoc: rustdoc, Target: target}, nil
			}
		}
	}
	return Rust{}, ErrNoRust
}

// Env returns the environment that makes cargo use this toolchain.
func (r Rust) Env() []string {
	env := append(os.Environ(), "RUSTC="+r.Rustc)
	if r.Rustdoc != "" {
		env = append(env, "RUSTDOC="+r.Rustdoc)
	}
	return env
}

// FindC returns the clang that builds guests: $WASM_CC if set, else clang
// (or clang-14) on PATH, checked by compiling a reactor that allocates;
// else ErrNoC.
func FindC() (string, error) {
	cOnce.Do(func() { cTC, cErr = findC() })
	return cTC, cErr
}

func findC() (string, error) {
	candidates := []string{"clang", "clang-14"}
	if cc := os.Getenv("WASM_CC"); cc != "" {
		candidates = []string{cc}
	}
	dir, err := os.MkdirTemp("", "dynafold-cc-")
	if err != nil {
		return "", err
	}
	defer os.RemoveAll(dir)
	src := filepath.Join(dir, "probe.c")
	// malloc (wasi-libc) and a 128-bit division (compiler-rt's builtins,
	// libclang-rt-dev-wasm32, whose Debian build wants the stack protector's
	// symbols, which dynafold.c defines weakly).
	probe := "#include <stdlib.h>\n" +
		"__attribute__((weak)) unsigned long __stack_chk_guard; __attribute__((weak)) void __stack_chk_fail(void) {}\n" +
		"__attribute__((export_name(\"f\"))) int f(int n) { volatile unsigned __int128 x = (unsigned)n; char *p = malloc(n); return p[0] + (int)(x / 7); }\n"
	if err := os.WriteFile(src, []byte(probe), 0o644); err != nil {
		return "", err
	}
	var last []byte
	for _, c := range candidates {
		cc, err := exec.LookPath(c)
		if err != nil {
			continue
		}
		cmd := exec.Command(cc, append(CFlags(), "-o", filepath.Join(dir, "probe.wasm"), src)...)
		if last, err = cmd.CombinedOutput(); err == nil {
			return cc, nil
		}
	}
	if len(last) > 0 {
		return "", fmt.Errorf("%w\n%s", ErrNoC, last)
	}
	return "", ErrNoC
}

// CFlags are the flags of a C guest's build: a wasm32-wasi reactor, C11,
// optimized, warnings on, without the DWARF sections wasi-libc brings (the name
// section stays: traps name functions).
func CFlags() []string {
	return []string{"--target=wasm32-wasi", "-mexec-model=reactor", "-std=c11", "-O2", "-Wall", "-Wextra", "-Wl,--strip-debug"}
}

// skipIfMissing skips tb with one line naming the packages when err is
// ErrNoRust or ErrNoC, and fails it on any other error.
func skipIfMissing(tb interface {
	Helper()
	Skipf(string, ...any)
	Fatalf(string, ...any)
}, err error) {
	tb.Helper()
	switch {
	case errors.Is(err, ErrNoRust):
		tb.Skipf("skipping: no Rust toolchain for wasm32-wasi (apt-get install %s)", RustPackages)
	case errors.Is(err, ErrNoC):
		tb.Skipf("skipping: no C toolchain for wasm32-wasi (apt-get install %s)", CPackages)
	case err != nil:
		tb.Fatalf("wasmbuild: %v", err)
	}
}

func versionOf(ctx context.Context, tool string, env []string, args ...string) string {
	cmd := exec.CommandContext(ctx, tool, args...)
	cmd.Env = env
	out, _ := cmd.Output()
	return string(out)
}
