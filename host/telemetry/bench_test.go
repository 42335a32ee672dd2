package telemetry_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
	"github.com/dynafold/dynafold/internal/opstest"
)

// BenchmarkObserveBatch measures what the metrics cost per batch: one
// BatchProcessed and one ShardRead for a real result of 100 records over
// 20 rows (ProcessBatch itself is outside the timing).
func BenchmarkObserveBatch(b *testing.B) {
	f := opstest.Start(b, "")
	var recs []host.Record
	for s := range 20 {
		recs = append(recs, f.Append(b, fmt.Sprint("r", s), 0, opstest.Add(1), opstest.Add(2), opstest.Add(3), opstest.Add(4), opstest.Add(5))...)
	}
	res, err := f.Host.ProcessBatch(context.Background(), recs)
	if err != nil || len(res.Failed()) > 0 {
		b.Fatal(err, res.Failed())
	}
	m := telemetry.New(telemetry.Options{})
	for b.Loop() {
		m.ShardRead("Acct", "shardId-1", len(recs), time.Second)
		m.BatchProcessed("Acct", "shardId-1", res, time.Millisecond, nil)
	}
}
