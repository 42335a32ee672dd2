package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
)

// TestY3_RebuildWarnsOfAVersionNoRowNames: a mistyped version (1.0 for
// 1.0.0) was taken silently: --written-by printed "0 rows" and exited 0,
// so the operator believed the old rows gone, and --not-written-by rebuilt
// every row. Each now warns that no row names it and lists the versions
// the rows do name; a list with an empty version is refused before
// anything is printed.
func TestY3_RebuildWarnsOfAVersionNoRowNames(t *testing.T) {
	ctx := context.Background()
	cfgPath, env, summaries := writtenByOrders(t)
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, c)
	require.NoError(t, err)
	for id, by := range map[string]string{"o-1": "order-summary@1.0.0", "o-2": "order-summary@2.0.0"} {
		_, err := h.Append(ctx, "Order", id, 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}})
		require.NoError(t, err)
		env.Put(t, summaries, abi.Item{"pk": abi.S("OrderSummary#" + id), "sk": abi.S("OrderSummary"), "version": abi.N("1"), "writtenBy": abi.S(by)})
	}
	h.Close(ctx)
	var out, errOut bytes.Buffer
	octx := withOutput(ctx, &out, &errOut)
	rebuild := commandNamed(t, "rebuild")
	named := "the rows of " + summaries + " name order-summary@1.0.0, order-summary@2.0.0"

	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0", "--dry-run"}))
	assert.Contains(t, out.String(), "0 rows of "+summaries+" written by order-summary@1.0 ")
	assert.Contains(t, errOut.String(), "WARNING no row was written by order-summary@1.0 (nor folded on what it wrote): check the version given; "+named)

	out.Reset()
	errOut.Reset()
	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--not-written-by", "2.0", "--dry-run"}))
	assert.Contains(t, out.String(), "2 rows of "+summaries+" not written by order-summary@2.0 alone")
	assert.Contains(t, errOut.String(), "WARNING no row was written by order-summary@2.0, so every row that names a writer is rebuilt: check the version given (the one serving); "+named)

	// Versions the rows name: no warning; the selection is as it was.
	out.Reset()
	errOut.Reset()
	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--not-written-by", "2.0.0", "--dry-run"}))
	assert.Contains(t, out.String(), "1 row of "+summaries+" not written by order-summary@2.0.0 alone")
	assert.Contains(t, out.String(), "would rebuild o-1\n")
	require.NoError(t, rebuild(octx, []string{"--config", cfgPath, "--written-by", "1.0.0", "--dry-run"}))
	assert.Contains(t, out.String(), "1 row of "+summaries+" written by order-summary@1.0.0 ")
	assert.Empty(t, errOut.String())

	// A trailing comma: refused before anything is printed.
	out.Reset()
	err = rebuild(octx, []string{"--config", cfgPath, "--written-by", "order-summary@1.0.0,", "--dry-run"})
	assert.ErrorContains(t, err, "an empty plugin version in the list")
	assert.Empty(t, out.String())
}

// TestY3_RebuildNotWrittenByWarnsWhenTheWorkersServeAnotherVersion:
// --not-written-by is given the version serving; with host run's workers
// publishing what they serve, another version is warned of.
func TestY3_RebuildNotWrittenByWarnsWhenTheWorkersServeAnotherVersion(t *testing.T) {
	e := newSidecarEnv(t, ddblocal.StreamOptions{Shards: 1}, `"leaseDuration": "2s"`, "")
	e.createTables(t)
	run := e.startRun(t)
	waitPublished(t, e, run)
	var out, errOut bytes.Buffer
	octx := withOutput(context.Background(), &out, &errOut)
	rebuild := commandNamed(t, "rebuild")
	require.NoError(t, rebuild(octx, []string{"--config", e.cfgPath, "--not-written-by", "1.0.0", "--dry-run"}))
	assert.NotContains(t, errOut.String(), "the workers serve")
	require.NoError(t, rebuild(octx, []string{"--config", e.cfgPath, "--not-written-by", "1.0", "--dry-run"}))
	assert.Contains(t, errOut.String(), "WARNING the workers serve order-summary@1.0.0, not order-summary@1.0: --not-written-by is given the version serving")
}

// writtenByOrders writes a configuration of the order summaries (plugin
// 2.0.0) that records writtenBy, on a ddblocal of its own, and returns its
// path, the ddblocal and the rows' table.
func writtenByOrders(t *testing.T) (string, *testenv.Env, string) {
	t.Helper()
	env := testenv.Start(t)
	events, summaries := env.Table(t, "events", true), env.Table(t, "summaries", false)
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, fmt.Appendf(nil, `{"endpoint": %q,
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1, "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": %q, "checkpoint": {"field": "version"}, "writtenBy": "writtenBy"}]}`,
		env.Server.Endpoint(), events, v2Path(t), summaries), 0o644))
	return cfgPath, env, summaries
}
