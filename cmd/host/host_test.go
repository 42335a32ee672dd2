package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/lambda"
	"github.com/dynafold/dynafold/host/plugin/extism/asbuild"
	"github.com/dynafold/dynafold/internal/syncbuf"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
)

func TestH5_DemoOnTheEmbeddedDefaultChecksEveryRow(t *testing.T) {
	plugin := wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm")
	var stdout, stderr, logs syncbuf.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil))) // where a host without its own logger logs
	t.Cleanup(func() { slog.SetDefault(prev) })
	err := runDemo(withOutput(context.Background(), &stdout, &stderr), []string{"--orders", "40", "--lanes", "4", "--batch", "20", "--seed", "3",
		"--plugin", plugin, "--cache-dir", testCacheDir})
	require.NoError(t, err)
	out := stdout.String()
	assert.Contains(t, out, "all 40 rows equal the in-order fold of their stream")
	assert.Contains(t, out, "PutItem")
	assert.NotContains(t, stderr.String()+logs.String(), "plugin loaded", "the report alone: no informational log line beside it")
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
	h, err := host.New(context.Background(), c, host.WithEventStoreOnly())
	require.NoError(t, err)
	ok, err := h.Append(context.Background(), "Order", "o-1", 0,
		host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	bad, err := h.Append(context.Background(), "Order", "o-2", 0,
		host.NewEvent{Type: "OrderRefunded", Data: abi.Item{}}) // the plugin does not fold it
	require.NoError(t, err)
	var recs []host.Record
	for i, ev := range append(ok, bad...) {
		recs = append(recs, host.Record{EventID: fmt.Sprint("e", i), EventName: "INSERT",
			DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprintf("10%d", i)}})
	}
	body, err := json.Marshal(map[string]any{"Records": recs})
	require.NoError(t, err)
	recPath := filepath.Join(dir, "batch.json")
	require.NoError(t, os.WriteFile(recPath, body, 0o644))

	out := captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", recPath, "--json"}))
	})

	var resp struct {
		BatchItemFailures []struct{ ItemIdentifier string } `json:"batchItemFailures"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp), out)
	require.Len(t, resp.BatchItemFailures, 1)
	assert.Equal(t, "101", resp.BatchItemFailures[0].ItemIdentifier, "the row whose event the plugin cannot fold")
	row := env.Get(t, summaries, abi.Item{"pk": abi.S("OrderSummary#o-1"), "sk": abi.S("OrderSummary")})
	assert.Equal(t, "placed", row["status"].Str)

	// Without --json, each row says what happened to it, and why a row failed.
	out = captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", recPath}))
	})
	assert.Contains(t, out, "2 records: 2 events, 0 ignored, 0 failed to decode")
	assert.Contains(t, out, "row pk=OrderSummary#o-1,sk=OrderSummary: Order o-1: applied -, already applied v1, skipped -; checkpoint 1; not written")
	assert.Contains(t, out, "row pk=OrderSummary#o-2,sk=OrderSummary: FAILED, nothing written:")
	assert.Contains(t, out, `does not fold "OrderRefunded"`)
	assert.Contains(t, out, `"itemIdentifier": "101"`)
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

// orderConfig writes a configuration for the order-summary plugin against a
// fresh ddblocal and returns its path, the env and the read-model table.
func orderConfig(t *testing.T) (string, *testenv.Env, string) {
	env := testenv.Start(t)
	events, summaries := env.Table(t, "events", true), env.Table(t, "summaries", false)
	cfg := fmt.Sprintf(`{
  "endpoint": %q,
  "eventStore": {"table": %q, "schema": "shop", "schemaVersion": 1,
    "streams": [{"name": "Order", "eventTypes": ["OrderPlaced", "ItemAdded", "OrderShipped"], "composite": ["orderId"]}]},
  "projections": [{"name": "summaries", "plugin": %q, "table": %q, "checkpoint": {"field": "version"}}]
}`, env.Server.Endpoint(), events, wasmbuild.BuildPath(t, "../../plugins/examples/order-summary/wasm"), summaries)
	path := filepath.Join(t.TempDir(), "dynafold.json")
	require.NoError(t, os.WriteFile(path, []byte(cfg), 0o644))
	t.Setenv("AWS_ACCESS_KEY_ID", "x")
	t.Setenv("AWS_SECRET_ACCESS_KEY", "x")
	return path, env, summaries
}

func TestP11_CatchUpAndRebuildCommands(t *testing.T) {
	cfgPath, env, summaries := orderConfig(t)
	for _, args := range [][]string{
		{"--stream", "Order", "--id", "o-9", "--type", "OrderPlaced", "--data", `{"customer":"bo"}`},
		{"--stream", "Order", "--id", "o-9", "--type", "ItemAdded", "--data", `{"sku":"s","price":2.5}`},
	} {
		out := captureStdout(t, func() {
			require.NoError(t, runAppend(context.Background(), append([]string{"--config", cfgPath}, args...)))
		})
		assert.Contains(t, out, "Order o-9 v")
	}
	key := abi.Item{"pk": abi.S("OrderSummary#o-9"), "sk": abi.S("OrderSummary")}

	out := captureStdout(t, func() {
		require.NoError(t, runCatchUp(context.Background(), []string{"--config", cfgPath, "--id", "o-9"}))
	})
	assert.Contains(t, out, "applied 2 events, checkpoint 2")
	row := env.Get(t, summaries, key)
	assert.Equal(t, "2.5", row["total"].Str)

	row["total"] = abi.N("999")
	env.Put(t, summaries, row)
	out = captureStdout(t, func() {
		require.NoError(t, runRebuild(context.Background(), []string{"--config", cfgPath, "--id", "o-9"}))
	})
	assert.Contains(t, out, "written true, checkpoint 2")
	row = env.Get(t, summaries, key)
	assert.Equal(t, "2.5", row["total"].Str, "rebuild re-derives the row from version 1")
}

func TestES5_FilterPatternCommandPrintsFilterCriteria(t *testing.T) {
	cfgPath, _, _ := orderConfig(t)
	out := captureStdout(t, func() {
		require.NoError(t, runFilterPattern(context.Background(), []string{"--config", cfgPath}))
	})
	var fc struct{ Filters []struct{ Pattern string } }
	require.NoError(t, json.Unmarshal([]byte(out), &fc), out)
	require.Len(t, fc.Filters, 1)
	assert.JSONEq(t, `{"eventName":["INSERT"],"dynamodb":{"NewImage":{"__edd_e__":{"S":["order.event"]}}}}`, fc.Filters[0].Pattern)
}

func TestW3_DemoWithTheAssemblyScriptExtismPlugin(t *testing.T) {
	t.Parallel() // its own ddblocal and output (withOutput); shares only the compilation cache
	wasm := asbuild.Build(t, "../../plugins/examples/order-summary-as", asbuild.Module{
		Entry: "assembly/index.ts", SourceDir: "../../plugins/examples/order-summary-as/assembly",
		Args: []string{"--config", "asconfig.json", "--target", "release"},
	})
	path := filepath.Join(t.TempDir(), "order-summary-as.wasm")
	require.NoError(t, os.WriteFile(path, wasm, 0o644))
	var out strings.Builder
	err := runDemo(withOutput(context.Background(), &out, os.Stderr), []string{"--orders", "30", "--lanes", "4", "--batch", "20", "--seed", "9",
		"--plugin", path, "--cache-dir", ""})
	require.NoError(t, err)
	assert.Contains(t, out.String(), "all 30 rows equal the in-order fold of their stream", "the Extism plugin's rows equal the Go logic's fold")
}

func TestH5_DemoRunsAnyPluginFromAConfiguration(t *testing.T) {
	plugin := wasmbuild.BuildPath(t, "../../plugins/examples/zone-readings/wasm")
	out := captureStdout(t, func() {
		err := runDemo(context.Background(), []string{"--config", "testdata/zones/dynafold.json", "--plugin", plugin,
			"--events", "testdata/zones/events.json", "--copies", "8", "--lanes", "3", "--batch", "7", "--seed", "5"})
		require.NoError(t, err)
	})
	assert.Contains(t, out, "projection zones, plugin "+plugin)
	assert.Contains(t, out, "72 records, 24 stream instances, 32 rows", "9 events and 4 rows, 8 times")
	assert.Contains(t, out, "all 32 rows equal the in-order fold of their streams")

	// The row check: every attribute of the fold, the checkpoint aside.
	want := abi.Item{"zone": abi.S("north"), "readings": abi.N("2"), "seq": abi.N("0")}
	assert.True(t, itemCovers(abi.Item{"zone": abi.S("north"), "readings": abi.N("2"), "seq": abi.N("5"), "createdAt": abi.S("x")}, want, "seq"))
	assert.False(t, itemCovers(abi.Item{"zone": abi.S("north"), "readings": abi.N("1"), "seq": abi.N("5")}, want, "seq"), "a field differs")
	assert.False(t, itemCovers(abi.Item{"zone": abi.S("north"), "seq": abi.N("5")}, want, "seq"), "a field is missing")
	assert.False(t, itemCovers(nil, want, "seq"), "the row is missing")
}

// The demo on a configuration whose outbox delivers to a webhook commits
// the fixture copies' effects in the in-process ddblocal and sends none of
// them to the webhook: real consumers never see demo data.
func TestH5_DemoWithAConfigurationSendsNoEffectsOut(t *testing.T) {
	var calls atomic.Int32
	hook := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { calls.Add(1) }))
	defer hook.Close()
	dir := t.TempDir()
	cfg := fmt.Sprintf(`{
  "eventStore": {"table": "events", "schema": "ship", "schemaVersion": 1, "streams": [
    {"name": "Order", "composite": ["orderId"]}, {"name": "Scan", "composite": ["shipmentId"]},
    {"name": "Weigh", "composite": ["sessionId"]}]},
  "projections": [{"name": "shipments", "plugin": %q, "table": "shipments",
    "checkpoint": {"map": "checkpoints"}, "revision": {"field": "revision"},
    "outbox": {"deliver": {"webhook": {"url": %q}}}}]
}`, wasmbuild.BuildPath(t, "../../plugins/examples/shipment-summary/wasm"), hook.URL)
	require.NoError(t, os.WriteFile(filepath.Join(dir, "dynafold.json"), []byte(cfg), 0o644))
	events := `[
  {"stream": "Order", "streamId": "o-1", "version": 1, "type": "ParcelsAdded", "data": {"shipmentId": {"S": "sh-1"}, "parcels": {"N": "2"}}},
  {"stream": "Scan", "streamId": "sh-1", "version": 1, "type": "Scanned", "data": {"location": {"S": "Oslo"}}},
  {"stream": "Scan", "streamId": "sh-1", "version": 2, "type": "Scanned", "data": {"location": {"S": "Bergen"}}}
]`
	require.NoError(t, os.WriteFile(filepath.Join(dir, "events.json"), []byte(events), 0o644))
	out := captureStdout(t, func() {
		require.NoError(t, runDemo(context.Background(), []string{"--config", filepath.Join(dir, "dynafold.json"),
			"--events", filepath.Join(dir, "events.json"), "--copies", "3", "--seed", "3"}))
	})
	assert.Contains(t, out, "rows equal the in-order fold of their streams")
	assert.Contains(t, out, "none sent to outbox.deliver")
	assert.Zero(t, calls.Load(), "the webhook got demo effects")
}

// `host apply` answers a batch as the function under its source does: a
// Pipe's bare array is refused under "lambda" (the configuration's
// default) with the function's message, and under --source pipe it is
// answered by eventID; an event source mapping's {"Records": [...]} is
// refused under --source pipe.
func TestH2_ApplyAnswersAPipeBatchAsThePipeFunctionDoes(t *testing.T) {
	cfgPath, env, _ := orderConfig(t)
	c, err := host.LoadConfig(cfgPath)
	require.NoError(t, err)
	h, err := host.New(context.Background(), c, host.WithEventStoreOnly())
	require.NoError(t, err)
	evs, err := h.Append(context.Background(), "Order", "o-1", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("ann")}})
	require.NoError(t, err)
	more, err := h.Append(context.Background(), "Order", "o-2", 0, host.NewEvent{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("bo")}})
	require.NoError(t, err)
	var recs []host.Record
	for i, ev := range append(evs, more...) {
		item := h.EventItem(ev)
		if i == 1 {
			item["version"] = abi.S("two") // an item that does not decode: the record fails
			env.Put(t, c.EventStore.Table, item)
		}
		recs = append(recs, host.Record{EventID: fmt.Sprint("e", i), EventName: "INSERT",
			DynamoDB: host.StreamRecord{NewImage: item, SequenceNumber: fmt.Sprintf("10%d", i)}})
	}
	dir := t.TempDir()
	pipe, mapping := filepath.Join(dir, "pipe.json"), filepath.Join(dir, "event.json")
	body, err := json.Marshal(recs)
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(pipe, body, 0o644))
	body, err = json.Marshal(map[string]any{"Records": recs})
	require.NoError(t, err)
	require.NoError(t, os.WriteFile(mapping, body, 0o644))

	err = runApply(context.Background(), []string{"--config", cfgPath, "--records", pipe, "--json"})
	require.Error(t, err)
	want := lambda.CheckPayload(mustRead(t, pipe), lambda.SourceLambda)
	require.Error(t, want)
	assert.Contains(t, err.Error(), want.Error(), "the function's message")
	assert.Contains(t, err.Error(), "host apply --source pipe")

	out := captureStdout(t, func() {
		require.NoError(t, runApply(context.Background(), []string{"--config", cfgPath, "--records", pipe, "--source", "pipe", "--json"}))
	})
	var resp struct {
		BatchItemFailures []struct{ ItemIdentifier string } `json:"batchItemFailures"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &resp), out)
	require.Len(t, resp.BatchItemFailures, 1)
	assert.Equal(t, "e1", resp.BatchItemFailures[0].ItemIdentifier, "a Pipe reads eventIDs")

	err = runApply(context.Background(), []string{"--config", cfgPath, "--records", mapping, "--source", "pipe"})
	require.Error(t, err)
	assert.Contains(t, err.Error(), lambda.CheckPayload(mustRead(t, mapping), lambda.SourcePipe).Error())
	assert.Contains(t, err.Error(), "host apply --source lambda")

	err = runApply(context.Background(), []string{"--config", cfgPath, "--records", mapping, "--source", "kinesis"})
	assert.ErrorContains(t, err, `--source "kinesis": use lambda`)
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	require.NoError(t, err)
	return b
}
