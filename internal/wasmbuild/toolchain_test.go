package wasmbuild

import (
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"testing"
)

// skipRecorder is a testing.TB that records a skip or a failure and ends
// the goroutine, as the real ones do.
type skipRecorder struct {
	testing.TB
	skipped, failed string
}

func (r *skipRecorder) Helper() {}

func (r *skipRecorder) Skipf(format string, args ...any) {
	r.skipped = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

func (r *skipRecorder) Fatalf(format string, args ...any) {
	r.failed = fmt.Sprintf(format, args...)
	runtime.Goexit()
}

// run calls f with a recorder on a goroutine of its own and waits for it.
func run(f func(tb testing.TB)) *skipRecorder {
	r := &skipRecorder{}
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		f(r)
	}()
	wg.Wait()
	return r
}

// TestW7_MissingToolchainsSkipNamingThePackages: on a machine without the
// Rust or C toolchain for Wasm, building a Rust or C guest skips the test
// with one line naming the Debian packages to install; it never fails it.
func TestW7_MissingToolchainsSkipNamingThePackages(t *testing.T) {
	oldCandidates := rustCandidates
	t.Cleanup(func() {
		rustCandidates = oldCandidates
		rustOnce, cOnce = sync.Once{}, sync.Once{}
	})
	rustCandidates = [][3]string{{"/nonexistent/cargo", "/nonexistent/rustc", ""}}
	t.Setenv("WASM_CC", "/nonexistent/clang")
	rustOnce, cOnce = sync.Once{}, sync.Once{}

	if _, err := FindRust(); !errors.Is(err, ErrNoRust) || !strings.Contains(err.Error(), "apt-get install rustc cargo libstd-rust-dev-wasm32") {
		t.Errorf("FindRust: %v", err)
	}
	if _, err := FindC(); !errors.Is(err, ErrNoC) || !strings.Contains(err.Error(), "apt-get install clang lld wasi-libc libclang-rt-dev-wasm32") {
		t.Errorf("FindC: %v", err)
	}
	rust := run(func(tb testing.TB) { BuildRust(tb, t.TempDir()) })
	if rust.failed != "" || rust.skipped != "skipping: no Rust toolchain for wasm32-wasi (apt-get install rustc cargo libstd-rust-dev-wasm32)" {
		t.Errorf("BuildRust without a toolchain: skipped %q, failed %q", rust.skipped, rust.failed)
	}
	c := run(func(tb testing.TB) { BuildC(tb, []string{"guest.c"}) })
	if c.failed != "" || c.skipped != "skipping: no C toolchain for wasm32-wasi (apt-get install clang lld wasi-libc libclang-rt-dev-wasm32)" {
		t.Errorf("BuildC without a toolchain: skipped %q, failed %q", c.skipped, c.failed)
	}
}
