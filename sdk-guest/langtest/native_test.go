package langtest_test

import (
	"errors"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestW7_RustNativeTestsPass runs `cargo test` (natively, no Wasm) in the
// Rust SDK's crate and the Rust order-summary example: the SDK's unit
// tests (codec, decimals, texts) and the example's tests through the
// native fold harness (dynafold_guest::testing).
func TestW7_RustNativeTestsPass(t *testing.T) {
	tc, err := wasmbuild.FindRust()
	if errors.Is(err, wasmbuild.ErrNoRust) {
		t.Skipf("skipping: no Rust toolchain for wasm32-wasi (apt-get install %s)", wasmbuild.RustPackages)
	}
	if err != nil {
		t.Fatal(err)
	}
	target, err := wasmbuild.CargoTargetDir("native")
	if err != nil {
		t.Fatal(err)
	}
	for _, crate := range []string{filepath.Join(sdkDir(), "rust"), filepath.Join(sdkDir(), "..", "plugins", "examples", "order-summary-rs")} {
		cmd := exec.Command(tc.Cargo, "test", "--offline", "--manifest-path", filepath.Join(crate, "Cargo.toml"), "--target-dir", target)
		cmd.Env = tc.Env()
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("cargo test in %s: %v\n%s", crate, err, out)
		}
		if !strings.Contains(string(out), "test result: ok.") || strings.Contains(string(out), "FAILED") {
			t.Errorf("cargo test in %s:\n%s", crate, out)
		}
	}
}

// TestW7_CNativeTestsPass compiles the C order-summary example's tests
// with the machine's own C compiler (with AddressSanitizer and
// UndefinedBehaviorSanitizer where it has them) and runs them: the C SDK's
// native fold harness folds the cases as the host would.
func TestW7_CNativeTestsPass(t *testing.T) {
	cc, err := exec.LookPath("cc")
	if err != nil {
		t.Skip("skipping: no native C compiler (cc) for the C SDK's native tests")
	}
	dir := filepath.Join(sdkDir(), "..", "plugins", "examples", "order-summary-c")
	bin := filepath.Join(t.TempDir(), "order-summary-test")
	args := []string{"-std=c11", "-Wall", "-Wextra", "-Werror", "-g", "-I", filepath.Join(sdkDir(), "c"), "-o", bin,
		filepath.Join(dir, "order_summary_test.c"), filepath.Join(dir, "order_summary.c"), filepath.Join(sdkDir(), "c", "dynafold.c")}
	sanitized := append([]string{"-fsanitize=address,undefined", "-fno-sanitize-recover=all"}, args...)
	if out, err := exec.Command(cc, sanitized...).CombinedOutput(); err != nil {
		t.Logf("without sanitizers (%v: %s)", err, out)
		if out, err := exec.Command(cc, args...).CombinedOutput(); err != nil {
			t.Fatalf("%s %s: %v\n%s", cc, strings.Join(args, " "), err, out)
		}
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "PASS: 1 cases, 0 failed") {
		t.Fatalf("the C native tests: %v\n%s", err, out)
	}
}

// TestW7_CHeaderIsUsableFromCPlusPlus compiles a C++ program that includes
// dynafold.h and links dynafold.c compiled as C, with the machine's own
// compilers, and runs it (exact decimal arithmetic through the C API).
func TestW7_CHeaderIsUsableFromCPlusPlus(t *testing.T) {
	cc, err1 := exec.LookPath("cc")
	cxx, err2 := exec.LookPath("c++")
	if err1 != nil || err2 != nil {
		t.Skip("skipping: no native C and C++ compilers (cc, c++)")
	}
	dir := t.TempDir()
	sdk := filepath.Join(sdkDir(), "c")
	obj := filepath.Join(dir, "dynafold.o")
	if out, err := exec.Command(cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-c", "-I", sdk, "-o", obj, filepath.Join(sdk, "dynafold.c")).CombinedOutput(); err != nil {
		t.Fatalf("cc: %v\n%s", err, out)
	}
	bin := filepath.Join(dir, "cplusplus")
	if out, err := exec.Command(cxx, "-std=c++11", "-Wall", "-Wextra", "-Werror", "-I", sdk, "-o", bin, filepath.Join(sdk, "testdata", "cplusplus.cpp"), obj).CombinedOutput(); err != nil {
		t.Fatalf("c++: %v\n%s", err, out)
	}
	out, err := exec.Command(bin).CombinedOutput()
	if err != nil || strings.TrimSpace(string(out)) != "0.3" {
		t.Fatalf("the C++ program: %v\n%s", err, out)
	}
}
