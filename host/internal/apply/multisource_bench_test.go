package apply_test

import (
	"fmt"
	"sync"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// BenchmarkMultiSource measures row writes per second when every row is
// fed by several stream instances at once, under the revision guard, over
// 10 concurrent lanes. Per iteration each of 100 rows gets one new event
// from each of its instances (spread over three sources, one in latest
// mode), and a row's events are dealt to different lanes, so its instances
// race each other for the row. retries/write is lost races per write.
//
//	go test ./host/internal/apply -run '^$' -bench MultiSource -benchtime 20x
func BenchmarkMultiSource(b *testing.B) {
	for _, n := range []int{1, 3, 10} {
		b.Run(fmt.Sprintf("instances=%d", n), func(b *testing.B) {
			benchMultiSource(b, n)
		})
	}
}

func benchMultiSource(b *testing.B, instances int) {
	const rows, lanes = 100, 10
	f := newFixture(b)
	e, err := apply.New(apply.Projection{Name: "three", Table: f.table, KeyAttrs: []string{"pk", "sk"},
		Sources:    []apply.Source{{Name: "order", Stream: testlogic.Stream}, {Name: "scan", Stream: testlogic.Stream, Mode: abi.ModeLatest}, {Name: "weigh", Stream: testlogic.Stream}},
		Checkpoint: apply.Checkpoint{Map: "checkpoints"}, Revision: &apply.Revision{Field: "rev"},
		Retry: apply.Retry{Attempts: 40}, Logic: &threeSources{}}, f.db, reader{f})
	if err != nil {
		b.Fatal(err)
	}
	var written, retries int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		perLane := make([][]abi.Event, lanes)
		j := 0
		for r := range rows {
			for k := range instances {
				id := fmt.Sprintf("%cr%dk%d", "osw"[k%3], r, k)
				for _, ev := range f.append(b, id, fmt.Sprintf("Add:1@r%d", r)) {
					perLane[j%lanes] = append(perLane[j%lanes], ev)
					j++
				}
			}
		}
		b.StartTimer()
		var wg sync.WaitGroup
		results := make([]apply.Result, lanes)
		for l := range lanes {
			wg.Add(1)
			go func() {
				defer wg.Done()
				results[l] = e.ApplyBatch(ctx, routed(perLane[l]))
			}()
		}
		wg.Wait()
		b.StopTimer()
		for _, r := range results {
			for _, o := range r.Rows {
				if o.Err != nil {
					b.Fatal(o.Err)
				}
				retries += int64(o.Attempts - 1)
				if o.Written {
					written++
				}
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(written)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(b.N*rows*instances)/b.Elapsed().Seconds(), "events/s")
	b.ReportMetric(float64(retries)/float64(max(written, 1)), "retries/write")
}
