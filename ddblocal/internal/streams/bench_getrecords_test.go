package streams

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/dynafold/dynafold/abi"
)

// BenchmarkGetRecords measures GetRecords through Handle (request decoding,
// the read, the JSON response) on a stream of 40,000 records of 1,000
// items, reading every shard from its trim horizon in pages of Limit
// records; records/s counts the records returned.
func BenchmarkGetRecords(b *testing.B) {
	for _, limit := range []int{100, 1000} {
		b.Run(fmt.Sprintf("limit=%d", limit), func(b *testing.B) {
			r := newRegistry(b, Options{ShardMaxRecords: 1 << 30})
			arn, _ := r.Enable("T", ViewNewAndOldImages, []string{"pk", "sk"})
			c := benchChange()
			for i := 0; i < 40000; i++ {
				c.Keys = abi.Item{"pk": abi.S(fmt.Sprintf("order#%d", i%1000)), "sk": c.Keys["sk"]}
				r.Record(arn, c)
			}
			var d struct {
				StreamDescription struct{ Shards []struct{ ShardId string } }
			}
			if err := call(b, r, "DescribeStream", map[string]any{"StreamArn": arn}, &d); err != nil {
				b.Fatal(err)
			}
			var ids []string
			for _, sh := range d.StreamDescription.Shards {
				ids = append(ids, sh.ShardId)
			}
			next := func(i int) string {
				var it struct{ ShardIterator string }
				if err := call(b, r, "GetShardIterator", map[string]any{"StreamArn": arn, "ShardId": ids[i%len(ids)], "ShardIteratorType": IterTrimHorizon}, &it); err != nil {
					b.Fatal(err)
				}
				return it.ShardIterator
			}
			shard := 0
			iter := next(shard)
			read := 0
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				body, _ := json.Marshal(map[string]any{"ShardIterator": iter, "Limit": limit})
				out, err := r.Handle(ctx, "GetRecords", body)
				if err != nil {
					b.Fatal(err)
				}
				n := bytes.Count(out, []byte(`"eventID"`))
				read += n
				i := bytes.LastIndex(out, []byte(`"NextShardIterator":"`))
				if n == 0 || i < 0 {
					b.StopTimer()
					shard++
					iter = next(shard)
					b.StartTimer()
					continue
				}
				rest := out[i+len(`"NextShardIterator":"`):]
				iter = string(rest[:bytes.IndexByte(rest, '"')])
			}
			b.ReportMetric(float64(read)/b.Elapsed().Seconds(), "records/s")
		})
	}
}
