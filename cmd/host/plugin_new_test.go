package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// repoRoot is the dynafold checkout these tests run in.
func repoRoot(t testing.TB) string {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	return root
}

// sh runs a command in dir and returns its combined output, failing t on an
// error.
func sh(t testing.TB, dir string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// TestH2_PluginNewGoProjectBuildsTestsAndValidates generates a Go plugin,
// runs its native tests, builds its module, validates it (its shipped self
// test runs), folds its fixture and precompiles it, with the host's
// commands.
func TestH2_PluginNewGoProjectBuildsTestsAndValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a project with the go command")
	}
	t.Parallel() // shares nothing: its own directories, output and toolchain processes
	dir := filepath.Join(t.TempDir(), "account-balance")
	out, err := runPluginCmd(t, "new", "account-balance", "--dir", dir, "--sdk", repoRoot(t))
	require.NoError(t, err)
	assert.Contains(t, out, "wasm/main.go")
	gomod, err := os.ReadFile(filepath.Join(dir, "go.mod"))
	require.NoError(t, err)
	assert.Contains(t, string(gomod), "replace github.com/dynafold/dynafold => "+filepath.ToSlash(repoRoot(t)))

	sh(t, dir, "go", "mod", "tidy")
	assert.Contains(t, sh(t, dir, "go", "test", "-v", "./..."), "--- PASS: TestCases/amounts_sum_exactly")
	sh(t, dir, "make", "wasm")
	wasm := filepath.Join(dir, "build", "account-balance.wasm")

	out, err = runPluginCmd(t, "validate", wasm)
	require.NoError(t, err)
	assert.Contains(t, out, "plugin   account-balance@1.0.0")
	assert.Contains(t, out, "self_test")
	assert.Contains(t, out, "selftest passed")

	out, err = runPluginCmd(t, "test", wasm, "--events", filepath.Join(dir, "testdata/events.json"),
		"--expect", filepath.Join(dir, "testdata/rows.json"), "--decisions")
	require.NoError(t, err)
	assert.Contains(t, out, "5 events, 1 row as expected")
	// What became of each event, the rejected one with terminal's error.
	for _, want := range []string{
		"AccountBalance a-1 v1 AccountBalanceOpened → row pk=AccountBalance#a-1,sk=AccountBalance: applied\n",
		"AccountBalance a-1 v4 AccountBalanceDecreased → row pk=AccountBalance#a-1,sk=AccountBalance: rejected: BelowZero: v4: taking 5 from a total of 2.35\n",
		"AccountBalance a-1 v5 AccountBalanceIncreased → row pk=AccountBalance#a-1,sk=AccountBalance: applied\n",
	} {
		assert.Contains(t, out, want)
	}

	// Without --expect the rows go to stdout and the decisions to stderr:
	// a skipped event, and a row that fails with the plugin's error.
	events2 := filepath.Join(t.TempDir(), "events.json")
	require.NoError(t, os.WriteFile(events2, []byte(`[
  {"stream": "AccountBalance", "streamId": "a-1", "version": 1, "type": "AccountBalanceOpened", "data": {"name": {"S": "Ada"}}},
  {"stream": "AccountBalance", "streamId": "a-1", "version": 2, "type": "AccountBalanceAudited"},
  {"stream": "AccountBalance", "streamId": "b-1", "version": 1, "type": "AccountBalanceIncreased", "data": {"amount": {"S": "ten"}}},
  {"stream": "AccountBalance", "streamId": "b-1", "version": 2, "type": "AccountBalanceIncreased", "data": {"amount": {"N": "2"}}}
]`), 0o644))
	out, stderr, err := runPluginCmdStderr(t, "test", wasm, "--events", events2, "--decisions")
	require.Error(t, err, "a row failed")
	assert.Contains(t, out, `"pk":{"S":"AccountBalance#a-1"}`, "the rows that folded, on stdout")
	for _, want := range []string{
		"AccountBalance a-1 v2 AccountBalanceAudited → row pk=AccountBalance#a-1,sk=AccountBalance: skipped\n",
		"AccountBalance b-1 v1 AccountBalanceIncreased → row pk=AccountBalance#b-1,sk=AccountBalance: failed: evolve failed on AccountBalance b-1 v1 (AccountBalanceIncreased): BadAmount: AccountBalanceIncreased v1: amount is not a positive number",
		// the event after it names the event the row failed on, not that event's error as its own
		"AccountBalance b-1 v2 AccountBalanceIncreased → row pk=AccountBalance#b-1,sk=AccountBalance: failed: not written: the row failed on AccountBalance b-1 v1 (AccountBalanceIncreased)\n",
	} {
		assert.Contains(t, stderr, want)
	}

	cache := filepath.Join(t.TempDir(), "cache")
	out, err = runPluginCmd(t, "precompile", "--cache", cache, wasm)
	require.NoError(t, err)
	assert.Contains(t, out, "compiled into "+cache)

	// A project is never written over.
	_, err = runPluginCmd(t, "new", "account-balance", "--dir", dir)
	assert.ErrorContains(t, err, "exists and is not empty")
	_, err = runPluginCmd(t, "new", "Account_Balance", "--dir", t.TempDir())
	assert.ErrorContains(t, err, "lower-case letters, digits and dashes")
}

// shEnv is sh with extra environment variables.
func shEnv(t testing.TB, dir string, env []string, name string, args ...string) string {
	t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.CombinedOutput()
	require.NoError(t, err, "%s %s:\n%s", name, strings.Join(args, " "), out)
	return string(out)
}

// TestW7_PluginNewRustProjectBuildsTestsAndValidates generates a Rust
// plugin on the checkout's SDK, runs its native tests (cargo test: the
// cases through the SDK's fold harness), builds its module with the
// project's Makefile, validates it (its shipped self test runs and
// passes), folds its fixture and precompiles it, with the host's commands.
func TestW7_PluginNewRustProjectBuildsTestsAndValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a project with cargo")
	}
	if _, err := wasmbuild.FindRust(); err != nil {
		t.Skipf("skipping: no Rust toolchain for wasm32-wasi (apt-get install %s)", wasmbuild.RustPackages)
	}
	t.Parallel() // shares nothing: its own directories, output and toolchain processes
	dir := filepath.Join(t.TempDir(), "account-balance")
	out, err := runPluginCmd(t, "new", "account-balance", "--lang", "rust", "--dir", dir, "--sdk", repoRoot(t))
	require.NoError(t, err)
	assert.Contains(t, out, "src/lib.rs")
	assert.Contains(t, out, "make test wasm validate fixture")
	cargo, err := os.ReadFile(filepath.Join(dir, "Cargo.toml"))
	require.NoError(t, err)
	assert.Contains(t, string(cargo), `dynafold-guest = { path = "`+filepath.ToSlash(filepath.Join(repoRoot(t), "sdk-guest", "rust"))+`" }`)

	target, err := wasmbuild.CargoTargetDir("scaffold")
	require.NoError(t, err)
	env := []string{"CARGO_TARGET_DIR=" + target}
	tests := shEnv(t, dir, env, "make", "test")
	assert.Contains(t, tests, "test cases::tests::cases_pass ... ok")
	assert.Contains(t, tests, "test cases::tests::a_bad_amount_fails_the_row ... ok")
	shEnv(t, dir, env, "make", "wasm")
	validateScaffolded(t, dir, filepath.Join(dir, "build", "account-balance.wasm"))
}

// TestW7_PluginNewCProjectBuildsTestsAndValidates generates a C plugin on
// the checkout's SDK, runs its native tests (compiled with cc: the cases
// through the SDK's fold harness), builds its module with clang, validates
// it (its shipped self test runs and passes), folds its fixture and
// precompiles it, with the host's commands.
func TestW7_PluginNewCProjectBuildsTestsAndValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a project with clang")
	}
	if _, err := wasmbuild.FindC(); err != nil {
		t.Skipf("skipping: no C toolchain for wasm32-wasi (apt-get install %s)", wasmbuild.CPackages)
	}
	if _, err := exec.LookPath("cc"); err != nil {
		t.Skip("skipping: no native C compiler (cc) for the project's native tests")
	}
	t.Parallel() // shares nothing: its own directories, output and toolchain processes
	dir := filepath.Join(t.TempDir(), "account-balance")
	out, err := runPluginCmd(t, "new", "account-balance", "--lang", "c", "--dir", dir, "--sdk", repoRoot(t))
	require.NoError(t, err)
	assert.Contains(t, out, "account_balance.c")
	tests := sh(t, dir, "make", "test")
	assert.Contains(t, tests, "PASS: 2 cases, 0 failed")
	assert.Contains(t, tests, "ok   a bad amount fails the row")
	sh(t, dir, "make", "wasm")
	validateScaffolded(t, dir, filepath.Join(dir, "build", "account-balance.wasm"))
}

// validateScaffolded checks a generated project's module with the host:
// validate (the self test runs), the fixture, precompile.
func validateScaffolded(t *testing.T, dir, wasm string) {
	t.Helper()
	out, err := runPluginCmd(t, "validate", wasm)
	require.NoError(t, err)
	assert.Contains(t, out, "plugin   account-balance@1.0.0")
	assert.Contains(t, out, "self_test")
	assert.Contains(t, out, "selftest passed")

	out, err = runPluginCmd(t, "test", wasm, "--events", filepath.Join(dir, "testdata/events.json"),
		"--expect", filepath.Join(dir, "testdata/rows.json"))
	require.NoError(t, err)
	assert.Contains(t, out, "4 events, 1 row as expected")

	out, err = runPluginCmd(t, "precompile", "--cache", filepath.Join(t.TempDir(), "cache"), wasm)
	require.NoError(t, err)
	assert.Contains(t, out, "compiled into")
}
