package kfeed_test

import (
	"context"
	"encoding/base64"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/dynafold/dynafold/host/internal/kfeed"
)

// BenchmarkGetRecords measures the client's CPU for one GetRecords of 100
// Kinesis records carrying DynamoDB change records, through a Reader's
// Next, against a loopback server answering a fixed body: sdk is
// aws-sdk-go-v2's Kinesis client, wire the wire path (kfeed.WithWire).
// Both decode the change records the same way (decode.FromKinesisData).
//
//	go test ./host/internal/kfeed -run '^$' -bench GetRecords -benchmem
func BenchmarkGetRecords(b *testing.B) {
	const n = 100
	var recs []string
	for i := range n {
		recs = append(recs, fmt.Sprintf(`{"ApproximateArrivalTimestamp":1.764755825E9,"Data":"%s","PartitionKey":"o-%d","SequenceNumber":"4960000000000000000000000000000000000000000000%010d"}`,
			base64.StdEncoding.EncodeToString(changeData(fmt.Sprintf("o-%d", i%17), i)), i%17, i))
	}
	answer := []byte(`{"MillisBehindLatest":0,"NextShardIterator":"iterator-next","Records":[` + strings.Join(recs, ",") + `]}`)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		switch r.Header.Get("X-Amz-Target") {
		case "Kinesis_20131202.DescribeStreamSummary":
			_, _ = w.Write([]byte(`{"StreamDescriptionSummary":{"StreamARN":"arn:aws:kinesis:us-east-1:000000000000:stream/k","StreamName":"k","StreamStatus":"ACTIVE"}}`))
		case "Kinesis_20131202.GetShardIterator":
			_, _ = w.Write([]byte(`{"ShardIterator":"iterator-first"}`))
		case "Kinesis_20131202.GetRecords":
			_, _ = w.Write(answer)
		default:
			http.Error(w, "unknown target", http.StatusBadRequest)
		}
	}))
	b.Cleanup(srv.Close)
	kc := kinesis.New(kinesis.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		api  kfeed.API
	}{{"sdk", kc}, {"wire", kfeed.WithWire(ctx, kc)}} {
		b.Run(c.name, func(b *testing.B) {
			rd, err := kfeed.Open(ctx, c.api, "k", kfeed.Options{ReadsPerSecond: -1, PollInterval: time.Millisecond})
			if err != nil {
				b.Fatal(err)
			}
			it := rd.Iterator("shardId-000000000000", "")
			b.ReportAllocs()
			for b.Loop() {
				batch, err := it.Next(ctx)
				if err != nil || len(batch.Records) != n {
					b.Fatal(err, len(batch.Records))
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N*n), "us/record")
		})
	}
}
