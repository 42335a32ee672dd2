package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/decode"
	"github.com/dynafold/dynafold/host/eventstore"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

func TestH5_DemoOnTheEmbeddedDefaultChecksEveryRow(t *testing.T) {
	plugin := wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")
	out := captureStdout(t, func() {
		err := runDemo(context.Background(), []string{"--orders", "40", "--lanes", "4", "--batch", "20", "--seed", "3",
			"--plugin", plugin, "--cache-dir", t.TempDir()})
		require.NoError(t, err)
	})
	assert.Contains(t, out, "all 40 rows equal the in-order fold of their stream")
	assert.Contains(t, out, "PutItem")
}

func TestH5_DemoRowCheckCatchesADifference(t *testing.T) {
	want := abi.Item{"status": abi.S("shipped"), "version": abi.N("0")}
	assert.True(t, rowMatches(abi.Item{"status": abi.S("shipped"), "version": abi.N("3")}, want, 3))
	assert.False(t, rowMatches(abi.Item{"status": abi.S("placed"), "version": abi.N("3")}, want, 3), "a field differs")
	assert.False(t, rowMatches(abi.Item{"status": abi.S("shipped"), "version": abi.N("2")}, want, 3), "the checkpoint is behind")
	assert.False(t, rowMatches(nil, want, 3), "the row is missing")
}

func TestH2_ApplyCommandPrintsTheBatchResponse(t *testing.T) {
	env := testenv.Start(t)
	events, summaries := env.Table(t, "events", true), env.Table(t, "summaries", false)
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1,
    "streams": [{"name": "Order", "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": %q, "checkpoint": {"field": "version"}}]
}`, env.Server.Endpoint(), events, wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm"), summaries)
	cfgPath := filepath.Join(dir, "dynafold.json")
	require.NoError(t, os.WriteFile(cfgPath, []byte(cfg), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")

	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	c.Projections = nil
	h, err := host.New(context.Background(), c)
	require.NoError(t, err)
	s, _ := h.Stream("Order")
	ok, err := h.EventStore().Append(context.Background(), s, "o-1", 0,
		eventstore.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	bad, err := h.EventStore().Append(context.Background(), s, "o-2", 0,
		eventstore.NewEvent{Type: "OrderRefunded", Data: abi.Item{}}) // the plugin does not fold it
	require.NoError(t, err)
	var recs []decode.Record
	for i, ev := range append(ok, bad...) {
		recs = append(recs, decode.Record{EventID: fmt.Sprint("e", i), EventName: "INSERT",
			DynamoDB: decode.StreamRecord{NewImage: h.EventStore().Layout().Item(ev), SequenceNumber: fmt.Sprintf("10%d", i)}})
	}
	body, err := json.Marshal(map[string]any{"Records": recs})
	require.NoError(t, err)
	recPath := filepath.Join(dir, "batch.json")
	require.NoError(t, os.WriteFile(recPath, body, 0o644))

	out := captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", recPath}))
	})

	var resp struct {
		BatchItemFailures []struct{ ItemIdentifier string } `json:"batchItemFailures"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp), out)
	require.Len(t, resp.BatchItemFailures, 1)
	assert.Equal(t, "101", resp.BatchItemFailures[0].ItemIdentifier, "the row whose event the plugin cannot fold")
	row, err := env.DB.GetItem(context.Background(), summaries, abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	require.NoError(t, err)
	assert.Equal(t, "placed", row["status"].Str)
}

func captureStdout(t *testing.T, f func()) string {
	t.Helper()
	r, w, err := os.Pipe()
	require.NoError(t, err)
	old := os.Stdout
	os.Stdout = w
	done := make(chan string)
	go func() {
		b, _ := io.ReadAll(r)
		done <- string(b)
	}()
	defer func() { os.Stdout = old }()
	f()
	w.Close()
	os.Stdout = old
	return strings.TrimSpace(<-done)
}
