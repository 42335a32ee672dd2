package ddblocal

import (
	"context"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func benchPut(b *testing.B, opts Options, stream bool) {
	opts.TTLInterval = -1
	srv, err := Start(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := client(srv, 1)
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("bench"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		StreamSpecification:  benchStream(stream)}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		i := 0
		for pb.Next() {
			i++
			if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("bench"), Item: map[string]types.AttributeValue{"pk": s(fmt.Sprint(i)), "v": n("1")}}); err != nil {
				b.Fatal(err)
			}
		}
	})
}

func benchStream(on bool) *types.StreamSpecification {
	if !on {
		return nil
	}
	return &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}
}

func BenchmarkPutItem_Memory(b *testing.B) { benchPut(b, Options{}, false) }

func BenchmarkPutItem_MemoryStream(b *testing.B) { benchPut(b, Options{}, true) }

func BenchmarkPutItem_DataDir(b *testing.B) { benchPut(b, Options{DataDir: b.TempDir()}, false) }

// BenchmarkPutItem_DataDirStream measures persistent writes that each
// store a stream record too.
func BenchmarkPutItem_DataDirStream(b *testing.B) {
	benchPut(b, Options{DataDir: b.TempDir()}, true)
}
