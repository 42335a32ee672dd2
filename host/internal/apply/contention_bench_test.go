package apply_test

import (
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/dynafold/dynafold/abi"
	"github.com/dynafold/dynafold/host/internal/apply"
)

// BenchmarkContention has lanes apply batches to the same 100 hot rows at
// once: per iteration every row gets one new event per lane, and lane i
// brings the i-th of them, so every lane races every other on every row.
// It reports rows written per second, lost races (retries) per write, and
// the share of row outcomes that ended in ConcurrentModification at the
// default retry budget.
func BenchmarkContention(b *testing.B) {
	for _, lanes := range []int{1, 4, 10} {
		b.Run(fmt.Sprintf("lanes=%d", lanes), func(b *testing.B) {
			benchContention(b, lanes)
		})
	}
}

func benchContention(b *testing.B, lanes int) {
	f := newFixture(b)
	e := f.engine(b, nil)
	const rows = 100
	var written, retries, outcomes, conflicts int64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		perLane := make([][]abi.Event, lanes)
		for r := 0; r < rows; r++ {
			specs := make([]string, lanes)
			for l := range specs {
				specs[l] = "Add:1"
			}
			evs := f.append(b, fmt.Sprintf("hot-%d", r), specs...)
			for l, ev := range evs {
				perLane[l] = append(perLane[l], ev)
			}
		}
		b.StartTimer()
		var wg sync.WaitGroup
		results := make([]apply.Result, lanes)
		for l := 0; l < lanes; l++ {
			wg.Add(1)
			go func(l int) {
				defer wg.Done()
				results[l] = e.ApplyBatch(ctx, inputs(perLane[l]...))
			}(l)
		}
		wg.Wait()
		b.StopTimer()
		for _, r := range results {
			for _, o := range r.Rows {
				outcomes++
				retries += int64(o.Attempts - 1)
				if o.Written {
					written++
				}
				if errors.Is(o.Err, apply.ErrConcurrentModification) {
					conflicts++
				} else if o.Err != nil {
					b.Fatal(o.Err)
				}
			}
		}
		b.StartTimer()
	}
	b.ReportMetric(float64(written)/b.Elapsed().Seconds(), "rows/s")
	b.ReportMetric(float64(retries)/float64(max(written, 1)), "retries/write")
	b.ReportMetric(float64(conflicts)/float64(max(outcomes, 1)), "conflict-share")
}
