package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/host"
)

// TestH2_PluginNewAssemblyScriptProjectBuildsAndValidates generates an
// AssemblyScript plugin and builds it with its Makefile (asc from the
// example's node_modules, linked, so no registry is needed; the host built
// from this package): make wasm builds into build/next/, has the host
// validate it (its self test runs) and fold the fixture, and only then
// moves it to the watched build/NAME.wasm. The fixture's last event, an
// item added after shipping, is rejected through the scaffold's
// isTerminal, not failed; a bad price fails the row; a build whose self
// test fails never reaches the watched file; its dynafold.json loads.
func TestH2_PluginNewAssemblyScriptProjectBuildsAndValidates(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a project with npm")
	}
	if _, err := exec.LookPath("npm"); err != nil {
		t.Skip("npm (Node.js 20) is not installed: the AssemblyScript compiler runs on it")
	}
	t.Parallel() // shares nothing: its own directories, output and toolchain processes
	dir := filepath.Join(t.TempDir(), "orders-as")
	out, err := runPluginCmd(t, "new", "orders-as", "--lang", "assemblyscript", "--dir", dir)
	require.NoError(t, err)
	for _, f := range []string{"assembly/decimal.ts", "assembly/cases.ts", "assembly/names.ts", "dynafold.json", "testdata/events.json"} {
		assert.Contains(t, out, f)
	}
	modules := filepath.Join(repoRoot(t), "plugins", "examples", "order-summary-as", "node_modules")
	require.DirExists(t, modules, "the example's npm packages (npm ci in plugins/examples/order-summary-as)")
	require.NoError(t, os.Symlink(modules, filepath.Join(dir, "node_modules")))
	// -o: the linked packages are taken as installed (no npm ci).
	makeWasm := []string{"-o", "node_modules/.package-lock.json", "wasm", "HOST=" + hostBinary(t)}
	built := sh(t, dir, "make", makeWasm...)
	assert.Contains(t, built, "selftest passed")
	assert.Contains(t, built, "6 events, 1 row as expected")
	wasm := filepath.Join(dir, "build", "orders-as.wasm")
	require.FileExists(t, wasm)
	assert.NoFileExists(t, filepath.Join(dir, "build", "next", "orders-as.wasm"), "moved, not copied")

	out, err = runPluginCmd(t, "validate", wasm)
	require.NoError(t, err)
	assert.Contains(t, out, "plugin   orders-as@1.0.0")
	assert.Contains(t, out, "(extism)")
	assert.Contains(t, out, "self_test")
	assert.Contains(t, out, "selftest passed")

	out, err = runPluginCmd(t, "test", wasm, "--events", filepath.Join(dir, "testdata/events.json"),
		"--expect", filepath.Join(dir, "testdata/rows.json"), "--decisions")
	require.NoError(t, err)
	assert.Contains(t, out, "6 events, 1 row as expected")
	assert.Contains(t, out, "Order o-1 v5 OrderShipped → row pk=OrderSummary#o-1,sk=OrderSummary: applied\n")
	assert.Contains(t, out, "Order o-1 v6 ItemAdded → row pk=OrderSummary#o-1,sk=OrderSummary: rejected: AlreadyShipped: ItemAdded v6: order o-1 is already shipped\n")

	// A rejected event alone creates no row; a bad price fails its row.
	events := filepath.Join(t.TempDir(), "events.json")
	require.NoError(t, os.WriteFile(events, []byte(`[
  {"stream": "Order", "streamId": "o-2", "version": 1, "type": "OrderShipped"},
  {"stream": "Order", "streamId": "o-2", "version": 2, "type": "ItemAdded", "data": {"price": {"N": "1"}}},
  {"stream": "Order", "streamId": "o-3", "version": 1, "type": "ItemAdded", "data": {"price": {"S": "ten"}}}
]`), 0o644))
	out, stderr, err := runPluginCmdStderr(t, "test", wasm, "--events", events, "--decisions")
	require.Error(t, err, "a row failed")
	assert.Contains(t, out, `"status":{"S":"shipped"}`)
	for _, want := range []string{
		"Order o-2 v2 ItemAdded → row pk=OrderSummary#o-2,sk=OrderSummary: rejected: AlreadyShipped: ItemAdded v2: order o-2 is already shipped\n",
		"Order o-3 v1 ItemAdded → row pk=OrderSummary#o-3,sk=OrderSummary: failed: evolve failed on Order o-3 v1 (ItemAdded): BadEvent: ItemAdded v1: price is not a number",
	} {
		assert.Contains(t, stderr, want)
	}

	cfg, err := host.LoadConfig(filepath.Join(dir, "dynafold.json"))
	require.NoError(t, err)
	require.Len(t, cfg.Projections, 1)
	hs := cfg.Projections[0].HotSwap
	require.NotNil(t, hs)
	assert.True(t, hs.Watch)
	assert.Equal(t, "build/archive", hs.Archive)
	require.NotNil(t, hs.Fixture)

	out, err = runPluginCmd(t, "precompile", "--cache", filepath.Join(t.TempDir(), "cache"), wasm)
	require.NoError(t, err)
	assert.Contains(t, out, "compiled into")

	// A build whose self test fails stays in build/next/: the watched
	// module is not replaced.
	before, err := os.ReadFile(wasm)
	require.NoError(t, err)
	cases := filepath.Join(dir, "assembly", "cases.ts")
	src, err := os.ReadFile(cases)
	require.NoError(t, err)
	broken := strings.Replace(string(src), `"applied, applied, rejected: AlreadyShipped"`, `"applied, applied, applied"`, 1)
	require.NotEqual(t, string(src), broken)
	require.NoError(t, os.WriteFile(cases, []byte(broken), 0o644))
	cmd := exec.Command("make", makeWasm...)
	cmd.Dir = dir
	made, err := cmd.CombinedOutput()
	require.Error(t, err, "make wasm with a failing self test:\n%s", made)
	assert.Contains(t, string(made), "self_test: 1 failure: an item added after shipping is rejected: decisions = applied, applied, rejected: AlreadyShipped, want applied, applied, applied")
	after, err := os.ReadFile(wasm)
	require.NoError(t, err)
	assert.Equal(t, before, after, "the watched module is unchanged")
}
