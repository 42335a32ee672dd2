package main

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"

	"github.com/dynafold/dynafold/ddblocal"
	"github.com/dynafold/dynafold/internal/dynamotest"
	"github.com/dynafold/dynafold/internal/kinesisclient"
)

func TestDdblocal_NonLoopbackAddrNeedsTheFlag(t *testing.T) {
	err := runDDBLocal(context.Background(), []string{"--addr", "0.0.0.0:0"})
	if !errors.Is(err, ddblocal.ErrNonLoopback) || !strings.Contains(err.Error(), "--allow-non-loopback") {
		t.Fatalf("host ddblocal --addr 0.0.0.0:0: err %v; want a refusal naming --allow-non-loopback", err)
	}

	var logs bytes.Buffer
	prev := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&logs, nil)))
	t.Cleanup(func() { slog.SetDefault(prev) })
	ctx, cancel := context.WithTimeout(context.Background(), 500*time.Millisecond)
	defer cancel()
	if err := runDDBLocal(ctx, []string{"--addr", "0.0.0.0:0", "--allow-non-loopback"}); err != nil {
		t.Fatalf("host ddblocal --addr 0.0.0.0:0 --allow-non-loopback: %v", err)
	}
	if !strings.Contains(logs.String(), "level=WARN") || !strings.Contains(logs.String(), "non-loopback") {
		t.Errorf("no warning logged for a non-loopback address; logs:\n%s", logs.String())
	}
	if !strings.Contains(logs.String(), "ddblocal stopped; its tables were in memory and are gone (--data DIR keeps them)") {
		t.Errorf("no line when ddblocal stopped; logs:\n%s", logs.String())
	}
}

func TestDdblocal_SecondOnTheSameDataDirFails(t *testing.T) {
	dir := t.TempDir()
	first, err := ddblocal.Start(context.Background(), ddblocal.Options{DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err = runDDBLocal(ctx, []string{"--addr", "127.0.0.1:0", "--data", dir})
	if !errors.Is(err, ddblocal.ErrDataFileLocked) || !strings.Contains(err.Error(), dir) {
		t.Fatalf("a second host ddblocal on %s: err %v; want ErrDataFileLocked naming the file", dir, err)
	}
	if !strings.HasSuffix(err.Error(), "stop it or use another data directory") {
		t.Errorf("the error does not end with what to do: %v", err)
	}
}

// startFromFlags starts ddblocal with the options host ddblocal reads from
// args, on a free loopback port.
func startFromFlags(t *testing.T, args ...string) *ddblocal.Server {
	t.Helper()
	opts, err := ddblocalOptions(append([]string{"--addr", "127.0.0.1:0"}, args...))
	if err != nil {
		t.Fatal(err)
	}
	opts.Logger = slog.New(slog.DiscardHandler)
	srv, err := ddblocal.Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = srv.Close() })
	return srv
}

// TestC1_DdblocalLatencyFlagDelaysEveryRequest: --latency makes every
// request pay a round trip, table and stream operations alike.
func TestC1_DdblocalLatencyFlagDelaysEveryRequest(t *testing.T) {
	const latency = 60 * time.Millisecond
	srv := startFromFlags(t, "--latency", latency.String())
	c := dynamotest.ClientAt(t, srv.Endpoint())
	table := dynamotest.CreateTableWith(t, c, "lat", types.StreamViewTypeNewImage)
	sc := dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()),
		Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	ctx := context.Background()
	for _, call := range []struct {
		op  string
		run func() error
	}{
		{"PutItem", func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String(table),
				Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "b"}}})
			return err
		}},
		{"ListStreams", func() error {
			_, err := sc.ListStreams(ctx, &dynamodbstreams.ListStreamsInput{TableName: aws.String(table)})
			return err
		}},
	} {
		t0 := time.Now()
		if err := call.run(); err != nil {
			t.Fatalf("%s: %v", call.op, err)
		}
		if took := time.Since(t0); took < latency {
			t.Errorf("%s took %s with --latency %s", call.op, took, latency)
		}
	}
	if _, err := ddblocalOptions([]string{"--latency", "-1ms"}); err == nil || !strings.Contains(err.Error(), "negative") {
		t.Errorf("--latency -1ms: err %v, want a refusal", err)
	}
}

// TestC5_DdblocalStreamShardsFlagSetsTheOpenShardsOfANewStream: a stream of
// host ddblocal --stream-shards 3 starts with three open shards, and four
// without the flag.
func TestC5_DdblocalStreamShardsFlagSetsTheOpenShardsOfANewStream(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want int
	}{{nil, 4}, {[]string{"--stream-shards", "3"}, 3}, {[]string{"--stream-shards", "1"}, 1}} {
		srv := startFromFlags(t, tc.args...)
		c := dynamotest.ClientAt(t, srv.Endpoint())
		table := dynamotest.CreateTableWith(t, c, "shards", types.StreamViewTypeNewImage)
		d, err := c.DescribeTable(context.Background(), &dynamodb.DescribeTableInput{TableName: aws.String(table)})
		if err != nil {
			t.Fatal(err)
		}
		sc := dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()),
			Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
		ds, err := sc.DescribeStream(context.Background(), &dynamodbstreams.DescribeStreamInput{StreamArn: d.Table.LatestStreamArn})
		if err != nil {
			t.Fatal(err)
		}
		open := 0
		for _, sh := range ds.StreamDescription.Shards {
			if sh.SequenceNumberRange.EndingSequenceNumber == nil {
				open++
			}
		}
		if open != tc.want {
			t.Errorf("host ddblocal %v: %d open shards, want %d", tc.args, open, tc.want)
		}
	}
	if _, err := ddblocalOptions([]string{"--stream-shards", "0"}); err == nil || !strings.Contains(err.Error(), "at least one shard") {
		t.Errorf("--stream-shards 0: err %v, want a refusal", err)
	}
}

// TestY8_DDBLocalNoSyncFlag: --no-sync reaches Options.NoSync with --data,
// is off by default, and is refused without a data directory.
func TestY8_DDBLocalNoSyncFlag(t *testing.T) {
	opts, err := ddblocalOptions([]string{"--data", t.TempDir(), "--no-sync"})
	if err != nil || !opts.NoSync {
		t.Fatalf("--data DIR --no-sync: NoSync %v, err %v", opts.NoSync, err)
	}
	if opts, _ := ddblocalOptions([]string{"--data", t.TempDir()}); opts.NoSync {
		t.Fatal("--data DIR alone: NoSync is on, want the file synced after each write")
	}
	if _, err := ddblocalOptions([]string{"--no-sync"}); err == nil || !strings.Contains(err.Error(), "--data") {
		t.Fatalf("--no-sync without --data: err %v, want a refusal naming --data", err)
	}
}

func TestW6_DDBLocalCommandSetsTheRequestMemory(t *testing.T) {
	opts, err := ddblocalOptions([]string{"--request-memory-mib", "64", "--request-memory-wait", "2s"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.RequestMemory != 64<<20 || opts.RequestMemoryWait != 2*time.Second {
		t.Fatalf("--request-memory-mib 64 --request-memory-wait 2s: RequestMemory %d, RequestMemoryWait %v", opts.RequestMemory, opts.RequestMemoryWait)
	}
	opts, err = ddblocalOptions([]string{"--request-memory-mib", "-1", "--request-memory-wait", "0s"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.RequestMemory >= 0 || opts.RequestMemoryWait >= 0 {
		t.Fatalf("--request-memory-mib -1 --request-memory-wait 0s: RequestMemory %d, RequestMemoryWait %v; want no limit and no wait", opts.RequestMemory, opts.RequestMemoryWait)
	}
	if opts, _ := ddblocalOptions(nil); opts.RequestMemory != 512<<20 {
		t.Fatalf("default RequestMemory %d, want 512 MiB", opts.RequestMemory)
	}
}

// TestK3_DdblocalKinesisFlagsSetTheStreamsShardsLimitAndFaults: the
// --kinesis-* flags reach ddblocal's Kinesis options, and a probability
// outside [0, 1] is refused naming the flag.
func TestK3_DdblocalKinesisFlagsSetTheStreamsShardsLimitAndFaults(t *testing.T) {
	opts, err := ddblocalOptions([]string{"--kinesis-shards", "8", "--kinesis-read-limit", "5", "--kinesis-duplicates", "0.1", "--kinesis-reorder", "0.2", "--kinesis-fault-seed", "9"})
	if err != nil {
		t.Fatal(err)
	}
	k := opts.Kinesis
	if k.OnDemandShards != 8 || k.ReadsPerShardPerSecond != 5 || k.Faults.DuplicateRate != 0.1 || k.Faults.ReorderRate != 0.2 || k.Faults.Seed != 9 {
		t.Errorf("Kinesis options %+v", k)
	}
	if _, err := ddblocalOptions([]string{"--kinesis-duplicates", "1.5"}); err == nil || !strings.Contains(err.Error(), "--kinesis-duplicates 1.5: a probability is between 0 and 1") {
		t.Errorf("--kinesis-duplicates 1.5: %v", err)
	}
	srv := startFromFlags(t, "--kinesis-shards", "3")
	kc, err := kinesisclient.NewClient(context.Background(), srv.Endpoint(), "")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := kc.CreateStream(context.Background(), &kinesis.CreateStreamInput{StreamName: aws.String("s")}); err != nil {
		t.Fatal(err)
	}
	sum, err := kc.DescribeStreamSummary(context.Background(), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String("s")})
	if err != nil || aws.ToInt32(sum.StreamDescriptionSummary.OpenShardCount) != 3 {
		t.Errorf("an on-demand stream under --kinesis-shards 3: %v %+v", err, sum)
	}
}
