package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	"github.com/dynafold/dynafold/internal/wasmbuild"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// orderHost starts ddblocal and a host running the order-summary projection
// through the Wasm plugin ("wasm") or the same Go logic natively ("native").
func orderHost(tb testing.TB, kind string, more ...host.Option) (*host.Host, *testenv.Env) {
	tb.Helper()
	return orderHostWith(tb, kind, nil, more...)
}

// orderHostWith is orderHost with the projection's configuration changed
// by edit (nil: none).
func orderHostWith(tb testing.TB, kind string, edit func(*host.ProjectionConfig), more ...host.Option) (*host.Host, *testenv.Env) {
	tb.Helper()
	env := testenv.Start(tb)
	cfg := &host.Config{
		EventStore: host.EventStoreConfig{Table: env.Table(tb, "events", true), Schema: "shop", SchemaVersion: 1,
			Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId"}}}},
		Projections: []host.ProjectionConfig{{Name: "summaries", Table: env.Table(tb, "summaries", false),
			Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}}},
	}
	var opts []host.Option
	switch kind {
	case "native":
		p, err := guest.New(ordersummary.Projection)
		if err != nil {
			tb.Fatal(err)
		}
		cfg.Projections[0].Plugin = "native:order-summary"
		opts = append(opts, host.WithNative("order-summary", logic.Native(p, "order-summary")))
	case "wasm":
		cfg.Projections[0].Plugin = wasmbuild.BuildPath(tb, "../plugins/examples/order-summary/wasm")
		cfg.Plugins.CacheDir = filepath.Join(os.TempDir(), "dynafold-bench-wazero")
	}
	if edit != nil {
		edit(&cfg.Projections[0])
	}
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	h, err := host.New(context.Background(), cfg, append(append(opts, more...), host.WithClient(env.Client), host.WithLogger(quiet))...)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { h.Close(context.Background()) })
	return h, env
}

// appendOrders appends n new orders of k events each and returns their
// change-feed records in append order.
func appendOrders(tb testing.TB, h *host.Host, prefix string, n, k int) []host.Record {
	tb.Helper()
	ctx := context.Background()
	var recs []host.Record
	for i := 0; i < n; i++ {
		evs := []host.NewEvent{{Type: "OrderPlaced", Data: abi.Item{"customer": abi.S("c")}}}
		for j := 1; j < k; j++ {
			evs = append(evs, host.NewEvent{Type: "ItemAdded", Data: abi.Item{"sku": abi.S("s"), "price": abi.N("9.99")}})
		}
		out, err := h.Append(ctx, "Order", fmt.Sprintf("%s-%d", prefix, i), 0, evs...)
		if err != nil {
			tb.Fatal(err)
		}
		for _, ev := range out {
			recs = append(recs, host.Record{EventName: "INSERT", EventID: fmt.Sprint(len(recs)),
				DynamoDB: host.StreamRecord{NewImage: h.EventItem(ev), SequenceNumber: fmt.Sprintf("%021d", len(recs)+1)}})
		}
	}
	return recs
}

// BenchmarkApplyBatch measures events per second through processBatch against
// in-process ddblocal, and the DynamoDB requests per batch: 100 orders of 5
// events per iteration, in batches of 100 records, either in append order
// or shuffled across the whole iteration. writes/row-call is PutItems per
// row touched by a call (the target is exactly 1). The outputcheck
// variants measure what the check of the plugin's output costs (below).
func BenchmarkApplyBatch(b *testing.B) {
	for _, kind := range []string{"native", "wasm"} {
		b.Run(kind+"/outputcheck", func(b *testing.B) { benchOutputCheck(b, kind) })
		for _, order := range []string{"inorder", "shuffled"} {
			b.Run(kind+"/"+order, func(b *testing.B) {
				h, _ := orderHost(b, kind)
				ctx := context.Background()
				rng := rand.New(rand.NewPCG(1, 2))
				var events, writes, queries, batches, rows int64
				b.ResetTimer()
				for i := 0; i < b.N; i++ {
					b.StopTimer()
					recs := appendOrders(b, h, fmt.Sprintf("i%d", i), 100, 5)
					if order == "shuffled" {
						rng.Shuffle(len(recs), func(i, j int) { recs[i], recs[j] = recs[j], recs[i] })
					}
					h.ResetRequestCounts()
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
						batches++
					}
					b.StopTimer()
					c := h.RequestCounts()
					writes += c["PutItem"]
					queries += c["Query"]
					b.StartTimer()
				}
				b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(events), "ns/event")
				b.ReportMetric(float64(writes)/float64(rows), "writes/row-call")
				b.ReportMetric(float64(queries)/float64(batches), "queries/batch")
			})
		}
	}
}

// benchOutputCheck measures what checking the plugin's output against
// DynamoDB's rules costs: two hosts, one with the check and one without,
// each on its own ddblocal, process the same shape of work (100 orders of
// 5 events, in order, in batches of 100) in turn, alternating which goes
// first, so both see the same load on a shared machine. It reports each
// host's events/s and the ratio (1 = free).
func benchOutputCheck(b *testing.B, kind string) {
	ctx := context.Background()
	on, _ := orderHost(b, kind)
	off, _ := orderHost(b, kind, host.WithoutOutputCheck())
	var took [2]time.Duration
	var events int64
	run := func(h *host.Host, recs []host.Record) time.Duration {
		start := time.Now()
		for len(recs) > 0 {
			n := min(100, len(recs))
			res, err := h.ProcessBatch(ctx, recs[:n])
			if err != nil {
				b.Fatal(err)
			}
			if len(res.Failed()) > 0 {
				b.Fatalf("%d records failed", len(res.Failed()))
			}
			recs = recs[n:]
		}
		return time.Since(start)
	}
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		recs := [2][]host.Record{appendOrders(b, on, fmt.Sprintf("i%d", i), 100, 5), appendOrders(b, off, fmt.Sprintf("i%d", i), 100, 5)}
		b.StartTimer()
		first := i % 2
		took[first] += run([2]*host.Host{on, off}[first], recs[first])
		took[1-first] += run([2]*host.Host{on, off}[1-first], recs[1-first])
		events += int64(len(recs[0]))
	}
	b.ReportMetric(float64(events)/took[0].Seconds(), "events/s-checked")
	b.ReportMetric(float64(events)/took[1].Seconds(), "events/s-unchecked")
	b.ReportMetric(took[1].Seconds()/took[0].Seconds(), "checked/unchecked")
}
