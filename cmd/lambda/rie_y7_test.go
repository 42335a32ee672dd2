package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"sort"
	"testing"
	"time"

	"github.com/dynafold/dynafold/internal/netenv"
)

// BenchmarkLambdaRoundTrips measures one invocation of 100 records the
// Lambda way: cmd/lambda built as bootstrap under the Runtime Interface
// Emulator, with the order-summary Wasm plugin, talking to ddblocal through
// the tests' network (internal/netenv: 5 ms per request and per new
// connection, requests counted at the server). Each iteration is one
// invocation of a batch made without latency; one invocation goes first
// (the cold start, and the connections a previous invocation would have
// left open). rtt/invocation is the Invoke call's wall time and
// duration-rtt the Duration of the emulator's REPORT line (what Lambda
// bills and shows), both divided by the latency; the counts are the
// invocation's requests by type.
//
//	go test ./cmd/lambda -run '^$' -bench LambdaRoundTrips -benchtime 10x
func BenchmarkLambdaRoundTrips(b *testing.B) {
	riePath := emulator(b)
	bootstrap := buildBootstrap(b)
	for _, shape := range []struct {
		name      string
		orders, k int
	}{{"contiguous/rows=20", 20, 5}, {"contiguous/rows=100", 100, 1}} {
		b.Run(shape.name, func(b *testing.B) {
			n := netenv.Start(b)
			events, rows := n.Table(b, "events", true), n.Table(b, "summaries", false)
			taskRoot := b.TempDir()
			wasmPlugin(b, filepath.Join(taskRoot, "plugins"))
			cfg := map[string]any{
				"eventStore": map[string]any{"table": events, "schema": "shop", "schemaVersion": 1, "streams": []any{
					map[string]any{"name": "Order", "eventTypes": []string{"OrderPlaced", "ItemAdded", "OrderShipped"}, "composite": []string{"orderId"}}}},
				"plugins":     map[string]any{"cacheDir": filepath.Join(taskRoot, "cache")},
				"projections": []any{map[string]any{"name": "summaries", "plugin": "order-summary.wasm", "table": rows, "checkpoint": map[string]any{"field": "version"}}},
			}
			js, _ := json.Marshal(cfg)
			if err := os.WriteFile(filepath.Join(taskRoot, "dynafold.json"), js, 0o644); err != nil {
				b.Fatal(err)
			}
			fn := startRIE(b, riePath, bootstrap, taskRoot, map[string]string{
				"LAMBDA_TASK_ROOT":            taskRoot,
				"DYNAFOLD_PLUGIN_DIR":         filepath.Join(taskRoot, "plugins"),
				"DYNAFOLD_SOURCE":             "lambda",
				"DYNAFOLD_METRICS":            "off",
				"AWS_ENDPOINT_URL_DYNAMODB":   n.URL,
				"AWS_REGION":                  "us-east-1",
				"AWS_ACCESS_KEY_ID":           "dummy",
				"AWS_SECRET_ACCESS_KEY":       "dummy",
				"AWS_LAMBDA_FUNCTION_TIMEOUT": "60",
				"AWS_LAMBDA_FUNCTION_NAME":    "dynafold-y7",
				// A common size; GOGC in the benchmark's environment
				// passes through (GOGC=100: Go's defaults, for a side by side).
				"AWS_LAMBDA_FUNCTION_MEMORY_SIZE": "1024",
			})
			seq, first := 0, 0
			invoke := func() (wall, duration time.Duration) {
				b.StopTimer()
				payload := syntheticBatchOf(b, n.Env, events, first, shape.orders, shape.k, &seq)
				first += shape.orders
				n.SetLatency(rttLatency)
				n.Reset()
				start := time.Now()
				b.StartTimer()
				body := fn.invoke(b, shape.name, payload)
				b.StopTimer()
				wall = time.Since(start)
				n.SetLatency(0)
				if ids := failures(b, body); len(ids) != 0 {
					b.Fatalf("batchItemFailures = %v, want none", ids)
				}
				reps, err := fn.waitReports(len(fn.labels))
				if err != nil {
					b.Fatalf("REPORT lines: %v", err)
				}
				d := num(b, reps[len(fn.labels)-1].duration)
				return wall, time.Duration(d * float64(time.Millisecond))
			}
			invoke() // cold start
			counts := map[string]int{}
			var wall, duration time.Duration
			var conns, chains, rowChains int64
			b.ResetTimer()
			for range b.N {
				w, d := invoke()
				wall += w
				duration += d
				for op, c := range n.Counts() {
					counts[op] += c
				}
				conns += n.Conns()
				chains += int64(netenv.Chain(n.Requests()))
				rowChains += int64(netenv.RowChain(n.Requests()))
			}
			per := func(v float64) float64 { return v / float64(b.N) }
			b.ReportMetric(per(float64(wall))/float64(rttLatency), "rtt/invocation")
			b.ReportMetric(per(float64(duration))/float64(rttLatency), "duration-rtt")
			ops := make([]string, 0, len(counts))
			for op := range counts {
				ops = append(ops, op)
			}
			sort.Strings(ops)
			for _, op := range ops {
				b.ReportMetric(per(float64(counts[op])), op+"/invocation")
			}
			b.ReportMetric(per(float64(conns)), "conns/invocation")
			b.ReportMetric(per(float64(chains)), "chain/invocation")
			b.ReportMetric(per(float64(rowChains)), "rowchain/invocation")
		})
	}
}

// rttLatency is the latency of every request, new connection and
// delivery: 5 ms, or DYNAFOLD_RTT_LATENCY (a duration) when set, as for
// the host's BenchmarkBatchRoundTrips.
var rttLatency = func() time.Duration {
	if d, err := time.ParseDuration(os.Getenv("DYNAFOLD_RTT_LATENCY")); err == nil && d > 0 {
		return d
	}
	return 5 * time.Millisecond
}()
