package lambda

import (
	"encoding/json"
	"os"
	"testing"
	"time"
)

// BenchmarkParseRecords measures the handler's reading of a 100-record
// payload alone (splitting it into records, then reading each), before
// anything is applied, for the same changes as
// DynamoDB stream records (aws-lambda-go's types and lambdaevents) and as
// Kinesis records (base64 data decoded, the change record read with the
// host's DynamoDB JSON codec), side by side: each iteration reads one
// batch of each kind, the order alternating, each timed alone. Reported
// per record: streams-ns/record, kinesis-ns/record, their ratio
// kinesis/streams (lower is faster), and the allocations of each.
func BenchmarkParseRecords(b *testing.B) {
	batch := func(fixture string) []byte {
		raw, err := os.ReadFile("testdata/" + fixture)
		if err != nil {
			b.Fatal(err)
		}
		var ev struct{ Records []json.RawMessage }
		if err := json.Unmarshal(raw, &ev); err != nil {
			b.Fatal(err)
		}
		out := make([]json.RawMessage, 0, 100)
		for len(out) < 100 {
			out = append(out, ev.Records[len(out)%len(ev.Records)])
		}
		payload, err := json.Marshal(map[string]any{"Records": out})
		if err != nil {
			b.Fatal(err)
		}
		return payload
	}
	read := func(payload []byte) {
		raws, err := splitPayload(payload, SourceLambda)
		if err != nil {
			b.Fatal(err)
		}
		_, bad, err := parseRecords(raws, SourceLambda)
		if err != nil {
			b.Fatal(err)
		}
		if len(bad) != 0 {
			b.Fatal(bad[0].err)
		}
	}
	streams, kinesis := batch("stream_event.json"), batch("kinesis_event.json")
	parse := func(payload []byte) time.Duration {
		start := time.Now()
		read(payload)
		return time.Since(start)
	}
	var ts, tk time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if i%2 == 0 {
			ts += parse(streams)
			tk += parse(kinesis)
		} else {
			tk += parse(kinesis)
			ts += parse(streams)
		}
	}
	b.StopTimer()
	n := float64(b.N * 100)
	b.ReportMetric(float64(ts.Nanoseconds())/n, "streams-ns/record")
	b.ReportMetric(float64(tk.Nanoseconds())/n, "kinesis-ns/record")
	b.ReportMetric(float64(tk)/float64(ts), "kinesis/streams")
	b.ReportMetric(testing.AllocsPerRun(20, func() { read(streams) })/100, "streams-allocs/record")
	b.ReportMetric(testing.AllocsPerRun(20, func() { read(kinesis) })/100, "kinesis-allocs/record")
}
