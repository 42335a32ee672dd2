package main

import (
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestH3_ValidateConfigChecksAgainstTheArchiveWhenThePluginFileDoesNotLoad:
// with a module in the projection's plugin file that does not load (a
// truncated copy, which a running host refuses while it keeps serving),
// validate --config checks the candidate against the hot-swap archive's
// last accepted version, as host run falls back on it at a start, and says
// so; it refused every candidate. Without an archive it says what to do.
func TestH3_ValidateConfigChecksAgainstTheArchiveWhenThePluginFileDoesNotLoad(t *testing.T) {
	t.Parallel() // prints apart (runPluginCmd); shares only the compilation cache
	dir := t.TempDir()
	v1, err := os.ReadFile(v1Path(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "orders.wasm"), v1[:1000], 0o644))
	require.NoError(t, os.MkdirAll(filepath.Join(dir, "archive"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(dir, "archive", "0000000000000000001-aaaaaaaaaaaa.wasm"), v1, 0o644))
	config := func(hotSwap string) string {
		p := filepath.Join(dir, fmt.Sprintf("dynafold-%d.json", len(hotSwap)))
		require.NoError(t, os.WriteFile(p, []byte(fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": "orders.wasm", "table": "summaries-rows", "checkpoint": {"field": "version"}%s}]}`, hotSwap)), 0o644))
		return p
	}

	out, err := runPluginCmd(t, "validate", v2Path(t), "--config", config(`, "hotSwap": {"watch": true, "archive": "archive"}`))
	require.NoError(t, err)
	assert.Contains(t, out, `  replaces order-summary@1.0.0 in projection "summaries", the archive's last accepted version (archive/0000000000000000001-aaaaaaaaaaaa.wasm, the module at orders.wasm does not load: load: `)

	_, err = runPluginCmd(t, "validate", v2Path(t), "--config", config(`, "hotSwap": {"watch": true}`))
	require.Error(t, err)
	assert.ErrorContains(t, err, "hotSwap.archive is not set")
	assert.ErrorContains(t, err, "put a module that loads back at orders.wasm")
}
