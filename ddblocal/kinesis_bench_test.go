package ddblocal

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// BenchmarkKinesisDestination measures what a table's Kinesis streaming
// destination adds to a PutItem: the same writes to a table without one
// and with one (the change record built, encoded and appended), in memory
// and with a DataDir (the record stored in the item's transaction).
func BenchmarkKinesisDestination(b *testing.B) {
	for _, store := range []string{"memory", "datadir"} {
		for _, dest := range []bool{false, true} {
			b.Run(fmt.Sprintf("%s/destination=%v", store, dest), func(b *testing.B) {
				opts := Options{TTLInterval: -1}
				if store == "datadir" {
					opts.DataDir = b.TempDir()
				}
				srv, err := Start(context.Background(), opts)
				if err != nil {
					b.Fatal(err)
				}
				defer srv.Close()
				ctx := context.Background()
				c := client(srv, 1)
				if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("bench"), BillingMode: types.BillingModePayPerRequest,
					AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
					KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}}); err != nil {
					b.Fatal(err)
				}
				if dest {
					kc := kclient(srv)
					if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("bench-changes"), ShardCount: aws.Int32(4)}); err != nil {
						b.Fatal(err)
					}
					if _, err := c.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{TableName: aws.String("bench"),
						StreamArn: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/bench-changes")}); err != nil {
						b.Fatal(err)
					}
				}
				b.ResetTimer()
				b.RunParallel(func(pb *testing.PB) {
					i := 0
					for pb.Next() {
						i++
						if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("bench"),
							Item: map[string]types.AttributeValue{"pk": s(fmt.Sprint(i)), "name": s("a name of some length"), "v": n("1")}}); err != nil {
							b.Fatal(err)
						}
					}
				})
			})
		}
	}
}

// BenchmarkKinesisGetRecords measures reading a shard of 10,000 records,
// 1,000 a call, through the SDK.
func BenchmarkKinesisGetRecords(b *testing.B) {
	srv, err := Start(context.Background(), Options{TTLInterval: -1})
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	ctx := context.Background()
	kc := kclient(srv)
	if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("s"), ShardCount: aws.Int32(1)}); err != nil {
		b.Fatal(err)
	}
	for i := 0; i < 20; i++ {
		var recs []ktypes.PutRecordsRequestEntry
		for j := 0; j < 500; j++ {
			recs = append(recs, ktypes.PutRecordsRequestEntry{PartitionKey: aws.String(fmt.Sprint(j)), Data: []byte(`{"awsRegion":"us-east-1","eventName":"INSERT","dynamodb":{"Keys":{"pk":{"S":"x"}}}}`)})
		}
		if _, err := kc.PutRecords(ctx, &kinesis.PutRecordsInput{StreamName: aws.String("s"), Records: recs}); err != nil {
			b.Fatal(err)
		}
	}
	b.ResetTimer()
	for b.Loop() {
		gi, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("s"), ShardId: aws.String("shardId-000000000000"), ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			b.Fatal(err)
		}
		n := 0
		for it := gi.ShardIterator; n < 10000; {
			gr, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(1000)})
			if err != nil {
				b.Fatal(err)
			}
			n += len(gr.Records)
			it = gr.NextShardIterator
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/10000, "ns/record")
}
