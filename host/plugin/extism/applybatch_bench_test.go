package extism_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/plugin/extism"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
)

// benchHost starts ddblocal and a host running the order-summary projection
// natively, through the Go plugin ("wasm") or through the AssemblyScript
// plugin on Extism ("extism"): the same setup as host's BenchmarkApplyBatch.
func benchHost(b *testing.B, kind string) *host.Host {
	b.Helper()
	env := testenv.Start(b)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(b, "events", true), Schema: "shop", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "summaries", Table: env.Table(b, "summaries", false),
			Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}}},
	}
	var opts []host.Option
	switch kind {
	case "native":
		cfg.Projections[0].Plugin = "native:order-summary"
		opts = append(opts, host.WithNative("order-summary", nativeOrderSummary()))
	case "wasm":
		cfg.Projections[0].Plugin = wasmbuild.BuildPath(b, "../../../plugins/examples/order-summary/wasm")
		cfg.Plugins.CacheDir = cacheDir
	case "extism":
		cfg.Projections[0].Plugin = "native:order-summary"
		opts = append(opts, host.WithNative("order-summary", load(b, orderSummaryAS(b), extism.Config{})))
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := host.New(context.Background(), cfg, append(opts, host.WithClient(env.Client), host.WithLogger(quiet))...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { h.Close(context.Background()) })
	return h
}

// benchOrders appends n new orders of k events each and returns their
// change-feed records in append order.
func benchOrders(b *testing.B, h *host.Host, prefix string, n, k int) []host.Record {
	b.Helper()
	ctx := context.Background()
	var recs []host.Record
	for i := 0; i < n; i++ {
		evs := []host.NewEvent{{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}}}
		for j := 1; j < k; j++ {
			evs = append(evs, host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("9.99")}})
		}
		out, err := h.Append(ctx, "Order", fmt.Sprintf("%s-%d", prefix, i), 0, evs...)
		if err != nil {
			b.Fatal(err)
		}
		for _, ev := range out {
			recs = append(recs, host.Record{EventName: "INSERT", EventID: fmt.Sprint(len(recs)),
				DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprintf("%021d", len(recs)+1)}})
		}
	}
	return recs
}

// BenchmarkApplyBatch measures events per second through processBatch
// against in-process ddblocal, as host's BenchmarkApplyBatch does (100
// orders of 5 events per iteration, batches of 100 records, in append order
// or shuffled), with the Extism plugin beside the native and raw rows.
//
//	go test ./host/plugin/extism -run '^$' -bench ApplyBatch -benchtime 20x
func BenchmarkApplyBatch(b *testing.B) {
	for _, kind := range []string{"native", "wasm", "extism"} {
		for _, order := range []string{"inorder", "shuffled"} {
			b.Run(kind+"/"+order, func(b *testing.B) {
				h := benchHost(b, kind)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(1, 2))
				var events, rows int64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					recs := benchOrders(b, h, fmt.Sprintf("i%d", i), 100, 5)
					if order == "shuffled" {
						rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
					}
					b.StartTimer()
					for len(recs) > 0 {
						n := min(100, len(recs))
						res, err := h.ProcessBatch(ctx, recs[:n])
						if err != nil {
							b.Fatal(err)
						}
						if len(res.Failed()) > 0 {
							b.Fatalf("%d records failed", len(res.Failed()))
						}
						rows += int64(len(res.Projections["summaries"].Rows))
						recs = recs[n:]
						events += int64(n)
					}
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
				b.ReportMetric(float64(rows)/float64(b.N), "rows/op")
			})
		}
	}
}
