package ratelimit

import (
	"context"
	"fmt"
	"math"
	"testing"
	"time"
)

// BenchmarkX8_LimiterHoldsItsRate runs a limiter of 100 and of 10,000
// events per second on the real clock for 10 seconds each, taking events
// as a projection does (one at a time at 100/s, batches of 100 at
// 10,000/s), after the initial burst is spent, and reports the rate held
// and its error against the limit (rate-error-%). Run it with -benchtime 1x.
func BenchmarkX8_LimiterHoldsItsRate(b *testing.B) {
	for _, tc := range []struct {
		rate  float64
		batch int
	}{{100, 1}, {10000, 100}} {
		b.Run(fmt.Sprintf("%.0f-per-s", tc.rate), func(b *testing.B) {
			ctx := context.Background()
			var worst float64
			for i := 0; i < b.N; i++ {
				l := New(tc.rate, 0, 0, Clock{})
				// spend the initial burst (one second's worth)
				if _, err := l.Wait(ctx, int(tc.rate), 0); err != nil {
					b.Fatal(err)
				}
				start := time.Now()
				events := 0
				for time.Since(start) < 10*time.Second {
					if _, err := l.Wait(ctx, tc.batch, 0); err != nil {
						b.Fatal(err)
					}
					events += tc.batch
				}
				got := float64(events) / time.Since(start).Seconds()
				errPct := 100 * (got - tc.rate) / tc.rate
				if math.Abs(errPct) > math.Abs(worst) {
					worst = errPct
				}
				b.ReportMetric(got, "events/s")
			}
			b.ReportMetric(worst, "rate-error-%")
		})
	}
}

// BenchmarkX8_TokensTakenWithoutWaiting is what a rate limit that never
// binds adds to each batch: taking 100 events' and 20 rows' tokens.
// Compare its ns/op with a batch's time in BenchmarkApplyBatch.
func BenchmarkX8_TokensTakenWithoutWaiting(b *testing.B) {
	l := New(1e9, 1e9, 0, Clock{})
	ctx := context.Background()
	b.ReportAllocs()
	for i := 0; i < b.N; i++ {
		if d, err := l.Wait(ctx, 100, 20); err != nil || d > time.Millisecond {
			b.Fatal(d, err)
		}
	}
}
