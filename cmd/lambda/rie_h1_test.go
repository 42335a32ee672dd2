package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/abi"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// TestH1_UnderRuntimeInterfaceEmulator runs cmd/lambda the Lambda way: built
// as bootstrap (linux, CGO_ENABLED=0, -tags lambda.norpc), started by the AWS
// Lambda Runtime Interface Emulator with the function's environment, its
// configuration in the task root and the order-summary Wasm plugin, talking
// to ddblocal over loopback. It posts captured DynamoDB stream events and an
// EventBridge Pipe batch to the Invoke API and checks the partial batch
// responses and the rows; the emulator's REPORT lines (Init Duration,
// Duration) are logged.
func TestH1_UnderRuntimeInterfaceEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bootstrap and the emulator")
	}
	riePath := emulator(t)
	bootstrap := buildBootstrap(t)

	env, events, rows := newTestEnv(t)
	taskRoot, cache := t.TempDir(), t.TempDir()
	wasmPlugin(t, filepath.Join(taskRoot, "plugins"))
	cfg := map[string]any{
		"eventStore": map[string]any{"table": events, "schema": "shop", "schemaVersion": 1, "streams": []any{
			map[string]any{"name": "Order", "eventTypes": []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, "composite": []string{"orderId"}}}},
		"plugins":     map[string]any{"cacheDir": cache},
		"projections": []any{map[string]any{"name": "summaries", "plugin": "order-summary.wasm", "table": rows, "checkpoint": map[string]any{"field": "version"}}},
	}
	b, _ := json.MarshalIndent(cfg, "", "  ")
	if err := os.WriteFile(filepath.Join(taskRoot, "dynafold.json"), b, 0o644); err != nil {
		t.Fatal(err)
	}
	fnEnv := func(source string) map[string]string {
		return map[string]string{
			"LAMBDA_TASK_ROOT":            taskRoot, // dynafold.json is found there
			"DYNAFOLD_PLUGIN_DIR":         filepath.Join(taskRoot, "plugins"),
			"DYNAFOLD_SOURCE":             source,
			"AWS_ENDPOINT_URL_DYNAMODB":   env.Server.Endpoint(),
			"AWS_REGION":                  "us-east-1",
			"AWS_ACCESS_KEY_ID":           "dummy",
			"AWS_SECRET_ACCESS_KEY":       "dummy",
			"AWS_LAMBDA_FUNCTION_TIMEOUT": "60",
			"AWS_LAMBDA_FUNCTION_NAME":    "dynafold-" + source,
		}
	}
	seed := func(name string) (raws []json.RawMessage, seq, eventID []string) {
		t.Helper()
		p := readFixture(t, name)
		seedEvents(t, env, events, p)
		return recordIDs(t, p)
	}
	row := func(id string) abi.Item {
		t.Helper()
		return env.Get(t, rows, ordersummary.RowKey(id))
	}

	// An event source mapping's function (DYNAFOLD_SOURCE=lambda).
	// Its memory is known: the collector gets room (GOGC=400, a soft limit
	// at three quarters of it).
	lambdaEnv := fnEnv("lambda")
	lambdaEnv["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"] = "512"
	fn := startRIE(t, riePath, bootstrap, taskRoot, lambdaEnv)
	seed("stream_event.json")
	if ids := failures(t, fn.invoke(t, "stream_event.json (7 records)", readFixture(t, "stream_event.json"))); len(ids) != 0 {
		t.Fatalf("stream_event.json: batchItemFailures = %v, want none", ids)
	}
	if r := row("o-1"); r["status"].Str != "shipped" || r["total"].Str != "19.75" || r["version"].Str != "4" {
		t.Errorf("row o-1 = %v, want shipped, total 19.75, version 4", r)
	}
	_, seq, _ := seed("failing_row.json")
	if ids := failures(t, fn.invoke(t, "failing_row.json (5 records)", readFixture(t, "failing_row.json"))); !equalIDs(ids, []string{seq[0]}) {
		t.Errorf("failing_row.json: batchItemFailures = %v, want [%s]", ids, seq[0])
	}
	if r := row("o-10"); r["items"].Str != "1" || r == nil {
		t.Errorf("row o-10 = %v, want 1 item", r)
	}
	raws, seq, _ := seed("decode_failure.json")
	if ids := failures(t, fn.invoke(t, "decode_failure.json (4 records)", readFixture(t, "decode_failure.json"))); !equalIDs(ids, []string{seq[2]}) {
		t.Errorf("decode_failure.json: batchItemFailures = %v, want [%s]", ids, seq[2])
	}
	// The undecodable record without its sequence number: the invocation fails.
	var rec map[string]any
	_ = json.Unmarshal(raws[2], &rec)
	delete(rec["dynamodb"].(map[string]any), "SequenceNumber")
	raws[2], _ = json.Marshal(rec)
	noID, _ := json.Marshal(map[string]any{"Records": raws})
	if body := string(fn.invoke(t, "a failed record without identifier", noID)); !strings.Contains(body, "StreamRecordIdentifierMissing") || !strings.Contains(body, "errorMessage") {
		t.Errorf("record without identifier: response %s, want a function error naming StreamRecordIdentifierMissing", body)
	}
	// Warm invocations with full batches (BatchSize 100: 20 new orders of 5
	// events each, their appends interleaved).
	const full = 5
	seqNo := 0
	for i := 0; i < full; i++ {
		if ids := failures(t, fn.invoke(t, "100 records, 20 new orders", syntheticBatch(t, env, events, i*20, 20, &seqNo))); len(ids) != 0 {
			t.Fatalf("batch of 100: batchItemFailures = %v", ids)
		}
	}
	if r := row("b-00099"); r["status"].Str != "shipped" || r["items"].Str != "3" || r["version"].Str != "5" {
		t.Errorf("row b-00099 = %v, want shipped with 3 items at version 5", r)
	}
	reps, err := fn.waitReports(4 + full)
	if err != nil {
		t.Fatalf("%v: %d REPORT lines", err, len(reps))
	}
	if reps[0].init == "" || reps[1].init != "" {
		t.Errorf("REPORT lines %+v: want an Init Duration on the first invocation only", reps)
	}
	if !strings.Contains(fn.out.String(), `"Namespace":"dynafold"`) {
		t.Errorf("no CloudWatch embedded metric format line on the function's stdout")
	}
	logReports(t, "lambda, empty compilation cache", fn.labels, reps, fn.initReport(), fn.initMs(t))
	if gc := fn.readyField(t, "gc"); gc != "GOGC=400 GOMEMLIMIT=384MiB" {
		t.Errorf("a 512 MiB function's collector: %q, want GOGC=400 GOMEMLIMIT=384MiB", gc)
	}

	// An EventBridge Pipe's target (DYNAFOLD_SOURCE=pipe), a new execution
	// environment: the plugin's compilation is cached now.
	// Its GOGC is the operator's: the collector is left as Go sets it.
	pipeEnv := fnEnv("pipe")
	pipeEnv["AWS_LAMBDA_FUNCTION_MEMORY_SIZE"], pipeEnv["GOGC"] = "512", "150"
	pipe := startRIE(t, riePath, bootstrap, taskRoot, pipeEnv)
	_, _, eventID := seed("pipe_batch.json")
	if ids := failures(t, pipe.invoke(t, "pipe_batch.json (6 records)", readFixture(t, "pipe_batch.json"))); !equalIDs(ids, []string{eventID[2], eventID[4]}) {
		t.Errorf("pipe_batch.json: batchItemFailures = %v, want [%s %s] (eventIDs)", ids, eventID[2], eventID[4])
	}
	if r := row("o-7"); r["status"].Str != "shipped" {
		t.Errorf("row o-7 = %v, want shipped", r)
	}
	pipe.invoke(t, "pipe_batch.json redelivered", readFixture(t, "pipe_batch.json"))
	reps, err = pipe.waitReports(2)
	if err != nil {
		t.Fatalf("%v: %d REPORT lines", err, len(reps))
	}
	logReports(t, "pipe, cached compilation", pipe.labels, reps, pipe.initReport(), pipe.initMs(t))
	if gc := pipe.readyField(t, "gc"); gc != "Go's defaults" {
		t.Errorf("a function with GOGC set: collector %q, want Go's defaults (the operator's GOGC)", gc)
	}
}

func logReports(t *testing.T, what string, labels []string, reps []report, initReport string, initMs float64) {
	t.Helper()
	t.Logf("RIE %s: INIT REPORT durationMs %s (the emulator's init phase); the function's own init (config, client, plugin load): %.2f ms", what, initReport, initMs)
	for i, r := range reps {
		if r.init != "" {
			t.Logf("RIE %s: %s: Init Duration %s ms, Duration %s ms", what, labels[i], r.init, r.duration)
		} else {
			t.Logf("RIE %s: %s: Duration %s ms", what, labels[i], r.duration)
		}
	}
}

// readyField returns a string field of the function's JSON "ready" log line.
func (r *rie) readyField(t *testing.T, name string) string {
	t.Helper()
	for _, line := range strings.Split(r.out.String(), "\n") {
		var l map[string]any
		if json.Unmarshal([]byte(line), &l) == nil && l["msg"] == "ready" {
			v, _ := l[name].(string)
			return v
		}
	}
	t.Errorf("no JSON \"ready\" log line from the function:\n%s", r.out)
	return ""
}

// initMs finds the function's JSON "ready" log line and returns its initMs.
func (r *rie) initMs(t *testing.T) float64 {
	t.Helper()
	for _, line := range strings.Split(r.out.String(), "\n") {
		var l struct {
			Msg    string  `json:"msg"`
			InitMs float64 `json:"initMs"`
		}
		if json.Unmarshal([]byte(line), &l) == nil && l.Msg == "ready" {
			return l.InitMs
		}
	}
	t.Errorf("no JSON \"ready\" log line from the function:\n%s", r.out)
	return 0
}
