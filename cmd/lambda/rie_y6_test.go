package main

import (
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/dynafold/dynafold/internal/wasmcache/wasmcachetest"
)

// TestY6_ColdStartUnderRuntimeInterfaceEmulator measures cmd/lambda's cold
// start under the Lambda Runtime Interface Emulator (SPEC W5, Y6) in three
// execution environments, three rounds each, the same work in each (the
// order-summary Wasm plugin, stream_event.json into fresh tables):
//
//   - "empty cache": plugins.cacheDir is an empty writable directory;
//   - "warm writable cache": the directory the previous environment filled;
//   - "precompiled read-only cache": the function package ships a
//     directory that `host plugin precompile` (the host binary, built
//     here) filled, mounted read-only (a read-only bind mount for root,
//     else 0555) with plugins.cacheReadOnly set.
//
// It logs the emulator's INIT REPORT durationMs, the REPORT line's Init
// Duration and the first invocation's Duration, and the medians. It checks
// that every environment folds the batch, that the precompiled one logs no
// cache miss and leaves its directory untouched. How fast each starts is a
// measurement (docs/BENCHMARKS.md), not an assertion.
func TestY6_ColdStartUnderRuntimeInterfaceEmulator(t *testing.T) {
	if testing.Short() {
		t.Skip("builds bootstrap, the host binary and the emulator")
	}
	tools := t.TempDir()
	riePath := emulator(t)
	bootstrap := buildBootstrap(t)
	hostBin := filepath.Join(tools, "host")
	if err := goBuild(t, ".", []string{"CGO_ENABLED=0"}, "build", "-o", hostBin, "../host"); err != nil {
		t.Fatal(err)
	}
	env, _, _ := newTestEnv(t)

	// The function package: the plugin and a precompiled cache beside it.
	pkg := t.TempDir()
	wasmPlugin(t, filepath.Join(pkg, "plugins"))
	pre := filepath.Join(pkg, "cache")
	out, err := exec.Command(hostBin, "plugin", "precompile", "--cache", pre, filepath.Join(pkg, "plugins", "order-summary.wasm")).CombinedOutput()
	if err != nil {
		t.Fatalf("host plugin precompile: %v\n%s", err, out)
	}
	t.Logf("host plugin precompile: %s", strings.TrimSpace(string(out)))
	roCache, how := wasmcachetest.MakeReadOnly(t, pre)
	t.Logf("precompiled cache read-only by %s, and plugins.cacheReadOnly", how)
	before := wasmcachetest.Snapshot(t, pre)

	type measure struct{ initReport, initDuration, duration, initMs float64 }
	results := map[string][]measure{}
	kinds := []string{"empty cache", "warm writable cache", "precompiled read-only cache"}
	for round := range 3 {
		warm := t.TempDir()
		for _, kind := range kinds {
			events, rows := env.Table(t, "events", true), env.Table(t, "summaries", false)
			cache, readOnly := warm, false
			if kind == "precompiled read-only cache" {
				cache, readOnly = roCache, true
			}
			taskRoot := t.TempDir()
			cfg := map[string]any{
				"eventStore": map[string]any{"table": events, "schema": "shop", "schemaVersion": 1, "streams": []any{
					map[string]any{"name": "Order", "eventTypes": []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, "composite": []string{"orderId"}}}},
				"plugins":     map[string]any{"cacheDir": cache, "cacheReadOnly": readOnly},
				"projections": []any{map[string]any{"name": "summaries", "plugin": "order-summary.wasm", "table": rows, "checkpoint": map[string]any{"field": "version"}}},
			}
			b, _ := json.MarshalIndent(cfg, "", "  ")
			if err := os.WriteFile(filepath.Join(taskRoot, "dynafold.json"), b, 0o644); err != nil {
				t.Fatal(err)
			}
			fn := startRIE(t, riePath, bootstrap, taskRoot, map[string]string{
				"LAMBDA_TASK_ROOT":            taskRoot,
				"DYNAFOLD_PLUGIN_DIR":         filepath.Join(pkg, "plugins"),
				"DYNAFOLD_SOURCE":             "lambda",
				"DYNAFOLD_METRICS":            "off",
				"AWS_ENDPOINT_URL_DYNAMODB":   env.Server.Endpoint(),
				"AWS_REGION":                  "us-east-1",
				"AWS_ACCESS_KEY_ID":           "dummy",
				"AWS_SECRET_ACCESS_KEY":       "dummy",
				"AWS_LAMBDA_FUNCTION_TIMEOUT": "60",
				"AWS_LAMBDA_FUNCTION_NAME":    "dynafold-w5",
			})
			seedEvents(t, env, events, readFixture(t, "stream_event.json"))
			if ids := failures(t, fn.invoke(t, "stream_event.json (7 records)", readFixture(t, "stream_event.json"))); len(ids) != 0 {
				t.Fatalf("%s: batchItemFailures = %v, want none", kind, ids)
			}
			reps, err := fn.waitReports(1)
			if err != nil || reps[0].init == "" {
				t.Fatalf("%s: REPORT lines %+v (%v), want an Init Duration on the first", kind, reps, err)
			}
			if readOnly && strings.Contains(fn.out.String(), "host plugin precompile") {
				t.Errorf("%s: the function logged a cache miss:\n%s", kind, fn.out)
			}
			m := measure{initReport: num(t, fn.initReport()), initDuration: num(t, reps[0].init), duration: num(t, reps[0].duration), initMs: fn.initMs(t)}
			t.Logf("round %d, %s: INIT REPORT durationMs %.2f, Init Duration %.2f ms, first invocation Duration %.2f ms; the function's own init %.2f ms",
				round+1, kind, m.initReport, m.initDuration, m.duration, m.initMs)
			results[kind] = append(results[kind], m)
		}
	}
	median := func(ms []measure, f func(measure) float64) float64 {
		v := make([]float64, len(ms))
		for i, m := range ms {
			v[i] = f(m)
		}
		slices.Sort(v)
		return v[len(v)/2]
	}
	med := map[string]measure{}
	for _, kind := range kinds {
		ms := results[kind]
		med[kind] = measure{
			initReport:   median(ms, func(m measure) float64 { return m.initReport }),
			initDuration: median(ms, func(m measure) float64 { return m.initDuration }),
			duration:     median(ms, func(m measure) float64 { return m.duration }),
			initMs:       median(ms, func(m measure) float64 { return m.initMs }),
		}
		m := med[kind]
		t.Logf("median of 3, %s: INIT REPORT durationMs %.2f, Init Duration %.2f ms, first invocation Duration %.2f ms; the function's own init %.2f ms",
			kind, m.initReport, m.initDuration, m.duration, m.initMs)
	}
	if after := wasmcachetest.Snapshot(t, pre); after != before {
		t.Errorf("the precompiled read-only cache changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

func num(t testing.TB, s string) float64 {
	t.Helper()
	v, err := strconv.ParseFloat(s, 64)
	if err != nil {
		t.Fatal(fmt.Errorf("a duration %q: %w", s, err))
	}
	return v
}
