package feed_test

import (
	"context"
	"fmt"
	"hash/crc32"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"

	"github.com/dynafold/dynafold/host/internal/feed"
)

// recordsAnswer is a GetRecords answer of n records of an event store's
// shape (an appended event: keys, type, version, a data map).
func recordsAnswer(n int) string {
	var recs []string
	for i := range n {
		keys := fmt.Sprintf(`{"pk":{"S":"$shop#v1#order#o-%d"},"sk":{"S":"$shop#v1#order.event_1#%010d"}}`, i%17, i)
		img := keys[:len(keys)-1] + fmt.Sprintf(`,"__edd_e__":{"S":"order.event"},"streamId":{"S":"o-%d"},"version":{"N":"%d"},`+
			`"eventType":{"S":"ItemAdded"},"timestamp":{"S":"2025-06-09T10:11:12.345Z"},`+
			`"data":{"M":{"_tag":{"S":"ItemAdded"},"sku":{"S":"sku-9"},"qty":{"N":"3"},"price":{"N":"12.50"},"tags":{"SS":["a","b"]}}}}`, i%17, i)
		recs = append(recs, fmt.Sprintf(`{"awsRegion":"us-east-1","dynamodb":{"ApproximateCreationDateTime":1.764755825E9,"Keys":%s,"NewImage":%s,`+
			`"SequenceNumber":"1000000000000000%05d","SizeBytes":312,"StreamViewType":"NEW_IMAGE"},"eventID":"e%031d","eventName":"INSERT",`+
			`"eventSource":"aws:dynamodb","eventVersion":"1.1"}`, keys, img, i, i))
	}
	return `{"NextShardIterator":"iterator-next","Records":[` + strings.Join(recs, ",") + `]}`
}

// BenchmarkGetRecords measures the client's CPU for one GetRecords of
// 100 records (an event store's appends) against a loopback server
// answering a fixed body: sdk is aws-sdk-go-v2's Streams client and
// streamsdk's conversion, wire the wire path (feed.WithWire), both
// through a Reader's Next. us/record is the client's time per record.
//
//	go test ./host/internal/feed -run '^$' -bench GetRecords -benchmem
func BenchmarkGetRecords(b *testing.B) {
	const n = 100
	answer := []byte(recordsAnswer(n))
	sum := strconv.FormatUint(uint64(crc32.ChecksumIEEE(answer)), 10)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body)
		h := w.Header()
		h.Set("Content-Type", "application/x-amz-json-1.0")
		switch r.Header.Get("X-Amz-Target") {
		case "DynamoDBStreams_20120810.GetShardIterator":
			_, _ = w.Write([]byte(`{"ShardIterator":"iterator-first"}`))
		case "DynamoDBStreams_20120810.GetRecords":
			h.Set("x-amz-crc32", sum)
			h.Set("Content-Length", strconv.Itoa(len(answer)))
			_, _ = w.Write(answer)
		default:
			http.Error(w, "unknown target", http.StatusBadRequest)
		}
	}))
	b.Cleanup(srv.Close)
	sc := dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.URL),
		Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	ctx := context.Background()
	for _, c := range []struct {
		name string
		api  feed.API
	}{{"sdk", sc}, {"wire", feed.WithWire(ctx, sc)}} {
		b.Run(c.name, func(b *testing.B) {
			it := feed.NewReader(c.api, "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/s", feed.Options{PollInterval: time.Millisecond}).Iterator("shard-1", "")
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
