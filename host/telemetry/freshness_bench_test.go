package telemetry

import (
	"fmt"
	"testing"
	"time"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host"
)

// batchResult is a batch's result as ProcessBatch makes it for 100 events
// over 20 rows of one projection, every row written.
func batchResult(now time.Time) *host.Result {
	res := &host.Result{Projections: map[string]host.ProjectionResult{}}
	var rows []host.Outcome
	for r := 0; r < 20; r++ {
		in := host.Instance{Source: "Order", StreamID: fmt.Sprint("o-", r)}
		for v := 1; v <= 5; v++ {
			ev := abi.Event{Stream: "Order", StreamID: in.StreamID, Version: uint64(v), Timestamp: now.Add(-time.Second).Format(time.RFC3339Nano)}
			in.Applied = append(in.Applied, ev)
			res.Events = append(res.Events, host.Event{Position: len(res.Events), Event: ev, Created: now.Add(-2 * time.Second)})
		}
		rows = append(rows, host.Outcome{Written: true, Committed: now, Instances: []host.Instance{in}})
	}
	res.Projections["summaries"] = host.ProjectionResult{Rows: rows, RateWait: time.Millisecond}
	return res
}

// BenchmarkX7_FreshnessObservedPerBatch is what the freshness histogram
// adds to each batch of host run: pairing 100 applied events with their
// records' creation times, observing each in the histogram and the last
// hour's slots, and counting the rate-limit wait. Compare its ns/op with a
// batch's time in BenchmarkApplyBatch.
func BenchmarkX7_FreshnessObservedPerBatch(b *testing.B) {
	m := New(Options{Objectives: []host.Objective{{Projection: "summaries", Name: "p95", Percent: 95, Threshold: 30 * time.Second}}})
	now := time.Now()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		res := batchResult(now)
		b.StartTimer()
		m.observeFreshness(res)
		m.observeRateWait(res)
	}
}
