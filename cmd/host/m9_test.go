package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/internal/ddbclient"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

// TestM9_BackfillAndRebuildByIdKeepEverySourceOfAShipment runs `host
// backfill`, `host rebuild --id` (with and without --source) and `host
// catchup --id --source` on the shipment-summary plugin, whose rows three
// streams feed, with an outbox: each row is rebuilt from all of its
// instances, so no source's part or checkpoint is lost; a row that only the
// scan and weigh streams feed is found too; and no effect is committed
// twice.
func TestM9_BackfillAndRebuildByIdKeepEverySourceOfAShipment(t *testing.T) {
	env := testenv.Start(t)
	events, rows := env.Table(t, "events", true), env.Table(t, "shipments", false)
	cfg := fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "ship", "schemaVersion": 1, "streams": [
    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
    {"name": "Weigh", "composite": ["sessionId"]}]},
  "projections": [{"name": "shipments", "plugin": %q, "table": %q,
    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
    "readModel": {"entityType": "ShipmentSummary"}, "removal": {}, "outbox": {}}]
}`, env.Server.Endpoint(), events, wasmbuild.BuildPath(t, "../../plugins/examples/shipment-summary/wasm"), rows)
	cfgPath := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	ctx := context.Background()
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(ctx, c)
	require.NoError(t, err)
	defer h.Close(ctx)
	appendTo := func(stream, id string, after uint64, typ string, data abi.Item) abi.Event {
		evs, err := h.Append(ctx, stream, id, after, host.NewEvent{Type: typ, Data: data})
		require.NoError(t, err)
		return evs[0]
	}
	// sh-1: an order, two scans, a weighing, delivered live.
	live := []abi.Event{
		appendTo("Order", "o-1", 0, "ParcelsAdded", abi.Item{"shipmentId": abi.S("sh-1"), "parcels": abi.N("2")}),
		appendTo("Scan", "sh-1", 0, "Scanned", abi.Item{"location": abi.S("Oslo")}),
		appendTo("Scan", "sh-1", 1, "Scanned", abi.Item{"location": abi.S("Bergen")}),
		appendTo("Weigh", "w-1", 0, "Weighed", abi.Item{"shipmentId": abi.S("sh-1"), "kg": abi.N("7")}),
	}
	res, err := h.ApplyEvents(ctx, "shipments", live...)
	require.NoError(t, err)
	require.Len(t, res.Rows, 1)
	require.NoError(t, res.Rows[0].Err)
	// sh-2: scanned and weighed, never an order; never delivered.
	appendTo("Scan", "sh-2", 0, "Scanned", abi.Item{"location": abi.S("Tromsø")})
	appendTo("Weigh", "w-2", 0, "Weighed", abi.Item{"shipmentId": abi.S("sh-2"), "kg": abi.N("3")})
	key1 := abi.Item{"pk": abi.S("Shipment#sh-1"), "sk": abi.S("S")}
	key2 := abi.Item{"pk": abi.S("Shipment#sh-2"), "sk": abi.S("S")}
	checkSh1 := func(what string) {
		t.Helper()
		row := env.Get(t, rows, key1)
		assert.Equal(t, "2", row["parcels"].Str, what)
		assert.Equal(t, "Bergen", row["location"].Str, what)
		assert.Equal(t, "7", row["kg"].Str, what)
		m := row["checkpoints"].Map
		assert.Equal(t, "1", m["order#o-1"].Str, what)
		assert.Equal(t, "2", m["scan#sh-1"].Str, what)
		assert.Equal(t, "1", m["weigh#w-1"].Str, what)
	}
	checkSh1("after the live delivery")
	notices := func(key abi.Item) int {
		n := 0
		for _, it := range scanTable(t, env, rows) {
			if it["pk"].Str == key["pk"].Str && it["__edd_ob_ver"].Str != "" {
				n++
			}
		}
		return n
	}
	require.Equal(t, 1, notices(key1), "the newest scan's notice")

	var out bytes.Buffer
	backfillOut, backfillErr = &out, &out
	t.Cleanup(func() { backfillOut, backfillErr = os.Stdout, os.Stderr })
	require.NoError(t, runBackfill(ctx, []string{"--config", cfgPath, "--segments", "2"}))
	assert.Contains(t, out.String(), "backfill of shipments into "+rows+": 5 stream instances, 2 rows written")
	checkSh1("after the backfill")
	row2 := env.Get(t, rows, key2)
	require.NotNil(t, row2, "a row no order feeds is found through its other streams")
	assert.Equal(t, "Tromsø", row2["location"].Str)
	assert.Equal(t, "3", row2["kg"].Str)
	assert.Equal(t, 1, notices(key1), "the backfill commits no effect twice")
	assert.Zero(t, notices(key2), "a new row is history: no effects")

	// Damage sh-1, then rebuild it through its weighing and through its order.
	damaged := env.Get(t, rows, key1)
	damaged["parcels"], damaged["kg"] = abi.N("999"), abi.N("999")
	env.Put(t, rows, damaged)
	stdout := captureStdout(t, func() {
		require.NoError(t, runRebuild(ctx, []string{"--config", cfgPath, "--id", "w-1", "--source", "weigh"}))
	})
	assert.Contains(t, stdout, "row pk=Shipment#sh-1,sk=S: written true, weigh#w-1's checkpoint 1")
	assert.Contains(t, stdout, "  order#o-1: checkpoint 1")
	assert.Contains(t, stdout, "  scan#sh-1: checkpoint 2")
	checkSh1("after host rebuild --id w-1 --source weigh")
	stdout = captureStdout(t, func() {
		require.NoError(t, runRebuild(ctx, []string{"--config", cfgPath, "--id", "o-1"}))
	})
	assert.Contains(t, stdout, "row pk=Shipment#sh-1,sk=S: written true, order#o-1's checkpoint 1")
	checkSh1("after host rebuild --id o-1")

	// A weighing never delivered: catching its instance up applies it with
	// every other instance of the row.
	appendTo("Weigh", "w-1", 1, "Weighed", abi.Item{"shipmentId": abi.S("sh-1"), "kg": abi.N("5")})
	stdout = captureStdout(t, func() {
		require.NoError(t, runCatchUp(ctx, []string{"--config", cfgPath, "--id", "w-1", "--source", "weigh"}))
	})
	assert.Contains(t, stdout, "row pk=Shipment#sh-1,sk=S: applied 1 event, weigh#w-1's checkpoint 2, written true")
	assert.Equal(t, "12", env.Get(t, rows, key1)["kg"].Str)
	assert.Equal(t, "2", env.Get(t, rows, key1)["parcels"].Str)
	assert.Equal(t, 1, notices(key1), "still one notice")

	err = runRebuild(ctx, []string{"--config", cfgPath, "--id", "w-1", "--source", "nope"})
	assert.ErrorContains(t, err, `--source "nope": projection "shipments" has no such source; its sources are [order scan weigh]`)
}

// scanTable reads every item of table, strongly consistent.
func scanTable(t *testing.T, env *testenv.Env, table string) []abi.Item {
	t.Helper()
	var out []abi.Item
	in := &dynamodb.ScanInput{TableName: aws.String(table), ConsistentRead: aws.Bool(true)}
	for {
		page, err := env.Client.Scan(context.Background(), in)
		require.NoError(t, err)
		for _, m := range page.Items {
			it, err := ddbclient.FromAttributeMap(m)
			require.NoError(t, err)
			out = append(out, it)
		}
		if len(page.LastEvaluatedKey) == 0 {
			return out
		}
		in.ExclusiveStartKey = page.LastEvaluatedKey
	}
}
