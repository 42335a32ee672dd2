package ddblocal

import (
	"context"
	"fmt"
	"net/http"
	"runtime"
	"sync/atomic"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func benchPut(b *testing.B, opts Options, stream bool) { benchPutN(b, opts, stream, 1) }

// benchPutN is benchPut with par goroutines per CPU writing at once.
func benchPutN(b *testing.B, opts Options, stream bool, par int) {
	opts.TTLInterval = -1
	srv, err := Start(context.Background(), opts)
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Close()
	c := client(srv, 1)
	if par > 1 {
		c = dynamodb.New(c.Options(), func(o *dynamodb.Options) {
			o.HTTPClient = &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 200}}
		})
	}
	ctx := context.Background()
	if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("bench"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		StreamSpecification:  benchStream(stream)}); err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	b.SetParallelism(par)
	b.RunParallel(func(pb *testing.PB) {
		i := int(seq.Add(1)) << 32
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

var seq atomic.Int64

// BenchmarkPutItem_100Writers is 100 writers of independent keys at once
// (50 per CPU on 2 CPUs): with -mutexprofile it shows what they wait on.
//
//	go test ./ddblocal -run '^$' -bench 'PutItem_100Writers' -mutexprofile /tmp/mutex.out
func BenchmarkPutItem_100Writers(b *testing.B) {
	runtime.SetMutexProfileFraction(1)
	defer runtime.SetMutexProfileFraction(0)
	b.Run("memory", func(b *testing.B) { benchPutN(b, Options{}, false, 100/runtime.GOMAXPROCS(0)) })
	b.Run("data", func(b *testing.B) { benchPutN(b, Options{DataDir: b.TempDir()}, false, 100/runtime.GOMAXPROCS(0)) })
}
