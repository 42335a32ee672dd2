package host_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/dynafold/dynafold/host"
	"github.com/dynafold/dynafold/host/telemetry"
)

// BenchmarkX8_ApplyBatchOpsOverhead measures what the freshness histogram
// and the token bucket cost a projection that is not slowed down: three
// hosts run the shape of BenchmarkApplyBatch (100 orders of 5 events per
// iteration, batches of 100 records, native logic), side by side in every
// iteration, in rotated order: "plain" reports nothing; "freshness"
// reports each batch to the metrics of host run with p95/p99 objectives
// (the histogram, the last hour's slots); "limited" does the same with a
// rate limit far above what the machine reaches, so every batch takes its
// tokens and never waits. It reports each one's events/s and their ratio
// to plain.
func BenchmarkX8_ApplyBatchOpsOverhead(b *testing.B) {
	type variant struct {
		name    string
		h       *host.Host
		m       *telemetry.Metrics
		elapsed time.Duration
		events  int
	}
	objectives := host.FreshnessConfig{"p95": host.Duration(30 * time.Second), "p99": host.Duration(2 * time.Minute)}
	var vs []*variant
	for _, name := range []string{"plain", "freshness", "limited"} {
		h, _ := orderHostWith(b, "native", func(p *host.ProjectionConfig) {
			if name != "plain" {
				p.Freshness = objectives
			}
			if name == "limited" {
				p.RateLimit = &host.RateLimitConfig{EventsPerSecond: 1e9, WritesPerSecond: 1e9}
			}
		})
		v := &variant{name: name, h: h}
		if name != "plain" {
			v.m = telemetry.New(telemetry.Options{Objectives: []host.Objective{{Projection: "summaries", Name: "p95", Percent: 95, Threshold: 30 * time.Second}}})
		}
		vs = append(vs, v)
	}
	ctx := context.Background()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		for j := range vs {
			v := vs[(i+j)%len(vs)]
			b.StopTimer()
			recs := appendOrders(b, v.h, fmt.Sprintf("i%d", i), 100, 5)
			b.StartTimer()
			start := time.Now()
			for len(recs) > 0 {
				n := min(100, len(recs))
				t0 := time.Now()
				res, err := v.h.ProcessBatch(ctx, recs[:n])
				if err != nil || len(res.Failed()) > 0 {
					b.Fatalf("%s: %v, %d failed", v.name, err, len(res.Failed()))
				}
				if v.m != nil {
					v.m.BatchProcessed("Order", "shard-1", res, time.Since(t0), nil)
				}
				recs = recs[n:]
				v.events += n
			}
			v.elapsed += time.Since(start)
		}
	}
	base := float64(vs[0].events) / vs[0].elapsed.Seconds()
	for _, v := range vs {
		rate := float64(v.events) / v.elapsed.Seconds()
		b.ReportMetric(rate, v.name+"-events/s")
		if v.name != "plain" {
			b.ReportMetric(100*(rate/base-1), v.name+"-vs-plain-%")
		}
	}
}
