package kinesisconf

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/big"
	"net"
	"os"
	"regexp"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/ratelimit"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
	"github.com/aws/smithy-go"

	"github.com/dynafold/dynafold/ddblocal"
)

// target is the server under test.
var target struct {
	name     string // "ddblocal", "kinesalite" or "endpoint"
	endpoint string
	local    *ddblocal.Server // set when ddblocal runs in-process
}

func TestMain(m *testing.M) { os.Exit(run(m)) }

func run(m *testing.M) int {
	if ep := os.Getenv("KINESIS_CONFORMANCE_ENDPOINT"); ep != "" {
		target.endpoint, target.name = ep, os.Getenv("KINESIS_CONFORMANCE_TARGET")
		if target.name == "" {
			target.name = "endpoint"
		}
		return m.Run()
	}
	srv, err := ddblocal.Start(context.Background(), ddblocal.Options{TTLInterval: -1, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		fmt.Fprintf(os.Stderr, "kinesisconf: start ddblocal: %v\n", err)
		return 1
	}
	target.name, target.endpoint, target.local = "ddblocal", srv.Endpoint(), srv
	code := m.Run()
	if err := srv.Close(); err != nil {
		fmt.Fprintf(os.Stderr, "kinesisconf: stop ddblocal: %v\n", err)
	}
	return code
}

// kc returns a Kinesis client for the target. It retries only a read on
// a connection the client's own transport closed (net.ErrClosed, a
// client-side race of net/http and the SDK, aws/aws-sdk-go-v2#2737); every
// error the server answers reaches the test as it was sent.
func kc() *kinesis.Client {
	return kinesis.New(kinesis.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(target.endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("AKIDCONFORMANCE", "conformance-secret", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.RateLimiter = ratelimit.None
			o.Retryables = []retry.IsErrorRetryable{retry.IsErrorRetryableFunc(func(err error) aws.Ternary {
				if errors.Is(err, net.ErrClosed) {
					return aws.TrueTernary
				}
				return aws.FalseTernary
			})}
		}),
	})
}

func ctx(t testing.TB) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

// skipOnKinesalite skips a check kinesalite 3.3.3 gets wrong against the
// Kinesis API reference; what says how.
func skipOnKinesalite(t testing.TB, what string) {
	t.Helper()
	if target.name == "kinesalite" {
		t.Skipf("%s skipped: kinesalite 3.3.3 %s (differs from the Kinesis API reference)", t.Name(), what)
	}
}

// requireLocal skips unless ddblocal runs in-process.
func requireLocal(t testing.TB, why string) *ddblocal.Server {
	t.Helper()
	if target.local == nil {
		t.Skipf("%s skipped: needs in-process ddblocal (%s); target is %s", t.Name(), why, target.name)
	}
	return target.local
}

var seq atomic.Int64

var unsafe = regexp.MustCompile(`[^a-zA-Z0-9_.-]+`)

// streamName is a stream name unique to this test and process.
func streamName(t testing.TB) string {
	n := unsafe.ReplaceAllString(strings.TrimPrefix(t.Name(), "TestConformance_"), "_")
	if len(n) > 90 {
		n = n[:90]
	}
	return fmt.Sprintf("k%d_%s_%d", os.Getpid()%100000, n, seq.Add(1))
}

// createStream creates a stream of n shards, waits until it is ACTIVE and
// deletes it when the test ends.
func createStream(t testing.TB, n int32) string {
	t.Helper()
	name := streamName(t)
	if _, err := kc().CreateStream(ctx(t), &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(n)}); err != nil {
		t.Fatalf("CreateStream %s: %v", name, err)
	}
	t.Cleanup(func() {
		c, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = kc().DeleteStream(c, &kinesis.DeleteStreamInput{StreamName: aws.String(name)})
	})
	waitActive(t, name)
	return name
}

// waitActive polls DescribeStreamSummary until the stream is ACTIVE.
func waitActive(t testing.TB, name string) {
	t.Helper()
	deadline := time.Now().Add(time.Minute)
	for {
		d, err := kc().DescribeStreamSummary(ctx(t), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
		if err != nil {
			t.Fatalf("DescribeStreamSummary %s: %v", name, err)
		}
		if d.StreamDescriptionSummary.StreamStatus == ktypes.StreamStatusActive {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("stream %s still %s after a minute", name, d.StreamDescriptionSummary.StreamStatus)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// apiErr returns the code and message of an API error, failing the test
// when err is not one.
func apiErr(t testing.TB, err error) (string, string) {
	t.Helper()
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("want an API error, got %v", err)
	}
	return ae.ErrorCode(), ae.ErrorMessage()
}

// shards lists every shard of a stream with ListShards.
func shards(t testing.TB, name string) []ktypes.Shard {
	t.Helper()
	var out []ktypes.Shard
	in := &kinesis.ListShardsInput{StreamName: aws.String(name)}
	for {
		ls, err := kc().ListShards(ctx(t), in)
		if err != nil {
			t.Fatalf("ListShards %s: %v", name, err)
		}
		out = append(out, ls.Shards...)
		if ls.NextToken == nil {
			return out
		}
		in = &kinesis.ListShardsInput{NextToken: ls.NextToken}
	}
}

// iterator returns a shard iterator.
func iterator(t testing.TB, name, shard string, typ ktypes.ShardIteratorType, seqNo *string) *string {
	t.Helper()
	gi, err := kc().GetShardIterator(ctx(t), &kinesis.GetShardIteratorInput{StreamName: aws.String(name), ShardId: aws.String(shard),
		ShardIteratorType: typ, StartingSequenceNumber: seqNo})
	if err != nil {
		t.Fatalf("GetShardIterator %s %s: %v", shard, typ, err)
	}
	return gi.ShardIterator
}

// drain reads a shard from TRIM_HORIZON until GetRecords ends it (a
// closed shard's NextShardIterator is null once it is read to its end, in
// the call that reads its last records or in a later, empty one) or, for
// an open shard, until a read returns nothing. It returns the records and
// the last response.
func drain(t testing.TB, name, shard string) ([]ktypes.Record, *kinesis.GetRecordsOutput) {
	t.Helper()
	var out []ktypes.Record
	it := iterator(t, name, shard, ktypes.ShardIteratorTypeTrimHorizon, nil)
	for empty := 0; ; {
		gr, err := kc().GetRecords(ctx(t), &kinesis.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(4)})
		if err != nil {
			t.Fatalf("GetRecords %s: %v", shard, err)
		}
		out = append(out, gr.Records...)
		if gr.NextShardIterator == nil {
			return out, gr
		}
		if len(gr.Records) == 0 {
			if empty++; empty == 3 { // an open shard read to its tip
				return out, gr
			}
		}
		it = gr.NextShardIterator
	}
}

func seqLess(a, b string) bool {
	x, _ := new(big.Int).SetString(a, 10)
	y, _ := new(big.Int).SetString(b, 10)
	return x.Cmp(y) < 0
}

func put(t testing.TB, name, pk, data string) *kinesis.PutRecordOutput {
	t.Helper()
	out, err := kc().PutRecord(ctx(t), &kinesis.PutRecordInput{StreamName: aws.String(name), PartitionKey: aws.String(pk), Data: []byte(data)})
	if err != nil {
		t.Fatalf("PutRecord %s: %v", pk, err)
	}
	return out
}
