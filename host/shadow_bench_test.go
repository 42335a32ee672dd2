package host_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"testing"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/logic"
	"github.com/dynafold/dynafold/internal/testenv"
	ordersummary "github.com/dynafold/dynafold/plugins/examples/order-summary"
	guest "github.com/dynafold/dynafold/sdk-guest"
)

// BenchmarkShadowProcessBatch measures what a shadow plugin costs a batch:
// the order-summary projection run natively, alone ("off") and with the same
// logic as its shadow ("on"), over in-process ddblocal, 100 orders of 5
// events per iteration in batches of 100 records. reads/batch counts the
// read requests (BatchGetItem and GetItem) of a batch.
func BenchmarkShadowProcessBatch(b *testing.B) {
	for _, shadow := range []bool{false, true} {
		name := map[bool]string{false: "off", true: "on"}[shadow]
		b.Run(name, func(b *testing.B) {
			env := testenv.Start(b)
			p, err := guest.New(ordersummary.Projection)
			if err != nil {
				b.Fatal(err)
			}
			pc := host.ProjectionConfig{Name: "summaries", Plugin: "native:live", Table: env.Table(b, "summaries", false),
				Checkpoint: host.CheckpointConfig{Field: ordersummary.Checkpoint}}
			if shadow {
				pc.Shadow = &host.ShadowConfig{Plugin: "native:candidate"}
			}
			cfg := &host.Config{
				EventStore: host.EventStoreConfig{Table: env.Table(b, "events", true), Schema: "shop", SchemaVersion: 1,
					Streams: []host.StreamConfig{{Name: "Order", Composite: []string{"orderId"}}}},
				Projections: []host.ProjectionConfig{pc},
			}
			h, err := host.New(context.Background(), cfg, host.WithClient(env.Client),
				host.WithNative("live", logic.Native(p, "order-summary")), host.WithNative("candidate", logic.Native(p, "order-summary")),
				host.WithLogger(slog.New(slog.NewTextHandler(io.Discard, nil))))
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { h.Close(context.Background()) })
			ctx := context.Background()
			var events, reads, batches int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				b.StopTimer()
				recs := appendOrders(b, h, fmt.Sprintf("i%d", i), 100, 5)
				h.ResetRequestCounts()
				b.StartTimer()
				for len(recs) > 0 {
					n := min(100, len(recs))
					res, err := h.ProcessBatch(ctx, recs[:n])
					if err != nil || len(res.Failed()) > 0 {
						b.Fatalf("batch: %v", err)
					}
					recs, events, batches = recs[n:], events+int64(n), batches+1
				}
				b.StopTimer()
				c := h.RequestCounts()
				reads += c["BatchGetItem"] + c["GetItem"]
				b.StartTimer()
			}
			if st := h.ShadowStats(); shadow && (len(st) != 1 || st[0].Differences != 0) {
				b.Fatalf("the same logic differs from itself: %+v", st)
			}
			b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
			b.ReportMetric(float64(reads)/float64(batches), "reads/batch")
		})
	}
}
