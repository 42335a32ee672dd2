package main

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/sidecar"
)

// TestH3_ValidateConfigNamesTheVersionTheWorkersServe: validate --config
// says what the candidate replaces from the module at the projection's
// plugin path, which may be a module the running host refused while the
// old version kept serving; with workers publishing what they serve in the
// lease table, the line names that too (it named the file's version alone,
// one that never served). With nothing running, the line is as it was.
func TestH3_ValidateConfigNamesTheVersionTheWorkersServe(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, `"leaseDuration": "2s"`, "")
	e.createTables(t)
	validate := func() string {
		t.Helper()
		out, err := runPluginCmd(t, "validate", v2Path(t), "--config", e.cfgPath)
		require.NoError(t, err)
		return out
	}
	// Nothing running: the module on disk alone.
	assert.Contains(t, validate(), "  replaces order-summary@1.0.0 in projection \"summaries\"\n")

	run := e.startRun(t)
	waitPublished(t, e, run)
	assert.Contains(t, validate(), `  replaces order-summary@1.0.0 in projection "summaries" (the module at orders.wasm, which the workers serve)`)

	// Another module in the file, which the running host does not take
	// (this configuration does not watch it): 1.0.0 still serves.
	b, err := os.ReadFile(v2Path(t))
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(filepath.Join(e.dir, "orders.wasm"), b, 0o644))
	assert.Contains(t, validate(), `  replaces order-summary@2.0.0 in projection "summaries" (the module at orders.wasm; the workers serve order-summary@1.0.0)`)
}

// waitPublished waits until e's host run (run) has published the plugin it
// serves for projection summaries in the lease table.
func waitPublished(t *testing.T, e *sidecarEnv, run *inProcessRun) {
	t.Helper()
	cfg, err := host.LoadConfig(e.cfgPath)
	require.NoError(t, err)
	deadline := time.Now().Add(60 * time.Second)
	for published := false; !published; {
		f, err := sidecar.ReadFleet(context.Background(), cfg, e.env.Client, nil, sidecar.FleetOptions{})
		require.NoError(t, err)
		for _, w := range f.Workers {
			published = published || (w.Alive && w.Plugins["summaries"] != "")
		}
		require.True(t, published || time.Now().Before(deadline), "host run never published its plugin; log:\n%s", run.logs)
		time.Sleep(50 * time.Millisecond)
	}
}
