package backfill_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/backfill"
	"github.com/dynafold/dynafold/internal/opstest"
)

// BenchmarkBackfill measures stream instances rebuilt per second by a
// backfill against in-process ddblocal: 200 instances of 5 events, with 1
// and 4 workers (4 scan segments). With path=instance the ledger keeps a
// checkpoint field (one instance per row: rebuilt instance by instance);
// with path=row it keeps a checkpoint map (rows may have several
// instances: the backfill maps rows to instances first, then rebuilds and
// catches up each row).
func BenchmarkBackfill(b *testing.B) {
	for _, path := range []string{"instance", "row"} {
		for _, workers := range []int{1, 4} {
			b.Run(fmt.Sprintf("path=%s/workers=%d", path, workers), func(b *testing.B) {
				f := opstest.Start(b, "")
				h := f.Host
				if path == "row" {
					cfg := *f.Cfg
					cfg.Projections = append([]host.ProjectionConfig(nil), f.Cfg.Projections...)
					cfg.Projections[0].Checkpoint = host.CheckpointConfig{Map: "checkpoints"}
					h = f.NewHostFor(b, &cfg)
				}
				const streams = 200
				for s := range streams {
					id := fmt.Sprint("acct-", s)
					f.Append(b, id, 0, opstest.Add(1), opstest.Add(2), opstest.Add(3), opstest.Add(4), opstest.Add(5))
				}
				b.ResetTimer()
				for b.Loop() {
					rep, err := backfill.Run(context.Background(), h, backfill.Options{Projection: "ledger", Segments: 4, Workers: workers})
					if err != nil || rep.Streams != streams {
						b.Fatalf("%d streams, %v", rep.Streams, err)
					}
				}
				b.ReportMetric(float64(streams*b.N)/b.Elapsed().Seconds(), "streams/s")
			})
		}
	}
}
