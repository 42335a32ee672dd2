package host_test

import (
	"context"
	"fmt"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/backfill"
	"github.com/dynafold/dynafold/internal/opstest"
	"github.com/dynafold/dynafold/internal/testlogic"
)

// BenchmarkVerify measures a full verification against a backfill of the
// same data, side by side: 1,000 rows of the test ledger, each fed by a
// stream instance of 20 events, on an in-process ddblocal whose every
// request takes 5 ms (FaultConfig.Latency). verify reads the table and
// the event store once each, in 4 parallel scan segments, and folds every
// row without writing; backfill (4 segments, 4 workers) rebuilds every
// row in place. rows/s is rows per second of wall time; requests is the
// DynamoDB requests one pass sends. sample=1% is one pass of continuous
// verification's default sample: the rows it checks, its requests and
// the process's CPU time (ddblocal's included).
//
//	go test ./host -run '^$' -bench 'BenchmarkVerify$' -benchtime 3x
func BenchmarkVerify(b *testing.B) {
	const rows, per = 1000, 20
	f := opstest.Start(b, "")
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := g; i < rows; i += 8 {
				evs := make([]host.NewEvent, per)
				for v := range evs {
					evs[v] = host.NewEvent{Type: "Add", Data: opstest.Add(v + 1)}
				}
				if _, err := f.Host.Append(context.Background(), testlogic.Stream, fmt.Sprint("acct-", i), 0, evs...); err != nil {
					b.Error(err)
					return
				}
			}
		})
	}
	wg.Wait()
	ctx := context.Background()
	if _, err := backfill.Run(ctx, f.Host, backfill.Options{Projection: "ledger"}); err != nil {
		b.Fatal(err)
	}
	f.Env.Server.SetFaults(ddblocal.FaultConfig{Latency: 5 * time.Millisecond})
	defer f.Env.Server.SetFaults(ddblocal.FaultConfig{})
	b.Run("verify", func(b *testing.B) {
		f.Host.ResetRequestCounts()
		for b.Loop() {
			rep, err := f.Host.Verify(ctx, host.VerifyOptions{Now: inAnHour})
			if err != nil || rep.Total().Rows != rows || rep.Total().Drift() != 0 || len(rep.Errors) > 0 {
				b.Fatalf("verify: %v %+v %v", err, rep.Total(), rep.Errors)
			}
		}
		report(b, f, rows)
	})
	b.Run("sample=1%", func(b *testing.B) {
		// one pass of continuous verification's default sample
		f.Host.ResetRequestCounts()
		var rowsChecked int
		cpu0 := cpuNow()
		for b.Loop() {
			rep, err := f.Host.Verify(ctx, host.VerifyOptions{Now: inAnHour, Sample: 0.01})
			if err != nil || rep.Total().Drift() != 0 || len(rep.Errors) > 0 {
				b.Fatalf("verify: %v %+v %v", err, rep.Total(), rep.Errors)
			}
			rowsChecked += rep.Total().Rows
		}
		b.ReportMetric(float64(cpuNow()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/pass")
		b.ReportMetric(float64(rowsChecked)/float64(b.N), "rows/pass")
		n := int64(0)
		for _, c := range f.Host.RequestCounts() {
			n += c
		}
		b.ReportMetric(float64(n)/float64(b.N), "requests")
	})
	b.Run("backfill", func(b *testing.B) {
		f.Host.ResetRequestCounts()
		for b.Loop() {
			rep, err := backfill.Run(ctx, f.Host, backfill.Options{Projection: "ledger", Segments: 4, Workers: 4})
			if err != nil || rep.Streams != rows {
				b.Fatalf("backfill: %v %d", err, rep.Streams)
			}
		}
		report(b, f, rows)
	})
}

// cpuNow is the process's user and system CPU time so far.
func cpuNow() time.Duration {
	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

func report(b *testing.B, f *opstest.Fixture, rows int) {
	b.ReportMetric(float64(rows*b.N)/b.Elapsed().Seconds(), "rows/s")
	n := int64(0)
	for _, c := range f.Host.RequestCounts() {
		n += c
	}
	b.ReportMetric(float64(n)/float64(b.N), "requests")
}
