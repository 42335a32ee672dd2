package lambda_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"sort"
	"testing"
	"time"
)

// BenchmarkLambdaKinesisVsStreams measures the handler's events per second
// on the same batches delivered as DynamoDB stream records and as Kinesis
// records (base64 data, creation time in ms), side by side: every
// iteration appends 20 new orders of 5 events to each of two in-process
// ddblocal servers and invokes each kind's handler with its 100 records,
// the order of the two alternating, each timed alone. Reported:
// streams-events/s, kinesis-events/s and their ratio kinesis/streams (the
// target is at least 0.9), and the median of the iterations' own ratios
// (median-kinesis/streams), which a burst of load on a shared machine
// moves less.
func BenchmarkLambdaKinesisVsStreams(b *testing.B) {
	quiet := slog.New(slog.NewTextHandler(io.Discard, nil))
	streams := newFn(b, setup{log: quiet})
	kinesis := newFn(b, setup{log: quiet})
	ctx := context.Background()
	invoke := func(f *fn, payload []byte) time.Duration {
		start := time.Now()
		resp, err := f.call(ctx, payload)
		took := time.Since(start)
		if err != nil || len(resp.BatchItemFailures) != 0 {
			b.Fatalf("invoke: %v %v", resp, err)
		}
		return took
	}
	var tStreams, tKinesis time.Duration
	var events int
	var ratios []float64
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		prefix := fmt.Sprint("b", i)
		sp := streamRecords(b, streams.orderEvents(b, prefix, 20, nil))
		kp, _ := kinesisEvent(b, kinesis.orderEvents(b, prefix, 20, nil), 100*i+1)
		b.StartTimer()
		var ts, tk time.Duration
		if i%2 == 0 {
			ts = invoke(streams, sp)
			tk = invoke(kinesis, kp)
		} else {
			tk = invoke(kinesis, kp)
			ts = invoke(streams, sp)
		}
		tStreams, tKinesis = tStreams+ts, tKinesis+tk
		ratios = append(ratios, ts.Seconds()/tk.Seconds()) // events/s: time inverted
		events += 100
	}
	se, ke := float64(events)/tStreams.Seconds(), float64(events)/tKinesis.Seconds()
	b.ReportMetric(se, "streams-events/s")
	b.ReportMetric(ke, "kinesis-events/s")
	b.ReportMetric(ke/se, "kinesis/streams")
	sort.Float64s(ratios)
	b.ReportMetric(ratios[len(ratios)/2], "median-kinesis/streams")
}
