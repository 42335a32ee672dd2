package main

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestM8_RebuildAndCatchUpCommandsForOneRow: `host rebuild --row` folds the
// named instances into the row through the shipment-summary plugin, and
// `host catchup --row` brings the instances its checkpoints know to their
// heads; a rebuild naming only some of the row's instances is refused
// unless --drop-others.
func TestM8_RebuildAndCatchUpCommandsForOneRow(t *testing.T) {
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "shipments", false)
	cfg := fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "ship", "schemaVersion": 1, "streams": [
    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
    {"name": "Weigh", "composite": ["sessionId"]}]},
  "projections": [{"name": "shipments", "plugin": %q, "table": %q,
    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
    "readModel": {"entityType": "ShipmentSummary"}, "removal": {}}]
}`, env.Server.Endpoint(), events, wasmbuild.BuildPath(t, "../../plugins/examples/shipment-summary/wasm"), rows)
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	ctx := context.Background()
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, c, host.WithEventStoreOnly())
	require.NoError(t, err)
	defer h.Close(ctx)
	_, err = h.Append(ctx, "Order", "o-1", 0, host.NewEvent{Type: "ParcelsAdded", Data: abi.Item{"shipmentId": abi.S("sh-1"), "parcels": abi.N("2")}})
	require.NoError(t, err)
	_, err = h.Append(ctx, "Scan", "sh-1", 0, host.NewEvent{Type: "Scanned", Data: abi.Item{"location": abi.S("Oslo")}},
		host.NewEvent{Type: "Scanned", Data: abi.Item{"location": abi.S("Bergen")}})
	require.NoError(t, err)
	key := abi.Item{"pk": abi.S("Shipment#sh-1"), "sk": abi.S("S")}

	out := captureStdout(t, func() {
		require.NoError(t, runRebuild(ctx, []string{"--config", cfgPath, "--row", `{"pk": {"S": "Shipment#sh-1"}, "sk": {"S": "S"}}`,
			"--instance", "order#o-1", "--instance", "scan#sh-1"}))
	})
	assert.Contains(t, out, "row pk=Shipment#sh-1,sk=S: written true, revision 1")
	assert.Contains(t, out, "scan#sh-1: checkpoint 2")
	row := env.Get(t, rows, key)
	assert.Equal(t, "2", row["parcels"].Str)
	assert.Equal(t, "Bergen", row["location"].Str)

	_, err = h.Append(ctx, "Order", "o-1", 1, host.NewEvent{Type: "ParcelsAdded", Data: abi.Item{"shipmentId": abi.S("sh-1"), "parcels": abi.N("5")}})
	require.NoError(t, err)
	out = captureStdout(t, func() {
		require.NoError(t, runCatchUp(ctx, []string{"--config", cfgPath, "--row", `{"pk": "Shipment#sh-1", "sk": "S"}`}))
	})
	assert.Contains(t, out, "applied 1 event, written true, revision 2")
	assert.Equal(t, "7", env.Get(t, rows, key)["parcels"].Str)

	// Naming some of the row's instances would drop the others' parts: it
	// is refused, naming them, unless --drop-others says so.
	err = runRebuild(ctx, []string{"--config", cfgPath, "--row", `{"pk": "Shipment#sh-1", "sk": "S"}`, "--instance", "order#o-1"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), "row pk=Shipment#sh-1,sk=S also has scan#sh-1, which --instance leaves out")
	assert.Contains(t, err.Error(), "--drop-others")
	assert.Equal(t, "Bergen", env.Get(t, rows, key)["location"].Str, "nothing written")
	out = captureStdout(t, func() {
		require.NoError(t, runRebuild(ctx, []string{"--config", cfgPath, "--row", `{"pk": "Shipment#sh-1", "sk": "S"}`,
			"--instance", "order#o-1", "--drop-others"}))
	})
	assert.Contains(t, out, "written true, revision 3")
	after := env.Get(t, rows, key)
	assert.Empty(t, after["location"].Str, "scan#sh-1's part dropped as asked")
	assert.NotContains(t, after["checkpoints"].Map, "scan#sh-1")
	assert.Contains(t, after["checkpoints"].Map, "order#o-1")
}
