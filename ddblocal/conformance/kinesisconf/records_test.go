package kinesisconf

import (
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

func sleep() { time.Sleep(10 * time.Millisecond) }

// TestConformance_KinesisRecordsByHashKey: PutRecord and PutRecords put
// each record in the shard whose range holds the MD5 of its partition key
// (or its ExplicitHashKey); a shard's records read back in put order with
// increasing sequence numbers.
func TestConformance_KinesisRecordsByHashKey(t *testing.T) {
	name := createStream(t, 2)
	// MD5("a") = 0cc175b9... < 2^127: shard 0; MD5("c") = 4a8a08f0... shard 0; MD5("b") = 92eb5ffe... shard 1
	want := map[string]string{"a": "shardId-000000000000", "b": "shardId-000000000001", "c": "shardId-000000000000"}
	for i := 0; i < 3; i++ {
		for _, pk := range []string{"a", "b", "c"} {
			out := put(t, name, pk, fmt.Sprintf("%s%d", pk, i))
			if aws.ToString(out.ShardId) != want[pk] {
				t.Errorf("partition key %s went to %s, want %s", pk, aws.ToString(out.ShardId), want[pk])
			}
		}
	}
	pr, err := kc().PutRecords(ctx(t), &kinesis.PutRecordsInput{StreamName: aws.String(name), Records: []ktypes.PutRecordsRequestEntry{
		{PartitionKey: aws.String("a"), Data: []byte("x0"), ExplicitHashKey: aws.String("340282366920938463463374607431768211455")},
		{PartitionKey: aws.String("b"), Data: []byte("x1"), ExplicitHashKey: aws.String("0")},
	}})
	if err != nil || aws.ToInt32(pr.FailedRecordCount) != 0 || len(pr.Records) != 2 ||
		aws.ToString(pr.Records[0].ShardId) != "shardId-000000000001" || aws.ToString(pr.Records[1].ShardId) != "shardId-000000000000" {
		t.Fatalf("PutRecords with explicit hash keys: %v %+v", err, pr)
	}
	got := map[string]string{}
	for _, id := range []string{"shardId-000000000000", "shardId-000000000001"} {
		recs, _ := drain(t, name, id)
		var data []string
		for i, r := range recs {
			data = append(data, string(r.Data))
			if i > 0 && !seqLess(aws.ToString(recs[i-1].SequenceNumber), aws.ToString(r.SequenceNumber)) {
				t.Errorf("%s: sequence numbers not increasing", id)
			}
			if r.ApproximateArrivalTimestamp == nil {
				t.Errorf("%s: a record without ApproximateArrivalTimestamp", id)
			}
		}
		got[id] = strings.Join(data, " ")
	}
	if got["shardId-000000000000"] != "a0 c0 a1 c1 a2 c2 x1" || got["shardId-000000000001"] != "b0 b1 b2 x0" {
		t.Errorf("shards read %q", got)
	}
	_, err = kc().PutRecord(ctx(t), &kinesis.PutRecordInput{StreamName: aws.String(name), PartitionKey: aws.String("k"), Data: []byte("x"),
		ExplicitHashKey: aws.String("340282366920938463463374607431768211456")})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" ||
		msg != "Invalid ExplicitHashKey. ExplicitHashKey must be in the range: [0, 2^128-1]. Specified value was 340282366920938463463374607431768211456" {
		t.Errorf("ExplicitHashKey 2^128: %s %q", code, msg)
	}
}

// TestConformance_KinesisIteratorTypes: TRIM_HORIZON, LATEST,
// AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER and AT_TIMESTAMP start where
// the reference says, and a sequence number of another shard, a missing
// one and a made-up iterator are refused with Kinesis's messages.
func TestConformance_KinesisIteratorTypes(t *testing.T) {
	name := createStream(t, 2)
	const s0 = "shardId-000000000000"
	latest := iterator(t, name, s0, ktypes.ShardIteratorTypeLatest, nil)
	var seqs []string
	for i := 0; i < 3; i++ {
		seqs = append(seqs, aws.ToString(put(t, name, "a", fmt.Sprint(i)).SequenceNumber))
	}
	read := func(it *string) string {
		t.Helper()
		var data []string
		for n := 0; n < 3 && it != nil; n++ {
			gr, err := kc().GetRecords(ctx(t), &kinesis.GetRecordsInput{ShardIterator: it})
			if err != nil {
				t.Fatalf("GetRecords: %v", err)
			}
			if gr.MillisBehindLatest == nil {
				t.Errorf("GetRecords without MillisBehindLatest")
			}
			for _, r := range gr.Records {
				data = append(data, string(r.Data))
			}
			it = gr.NextShardIterator
		}
		return strings.Join(data, " ")
	}
	if got := read(latest); got != "0 1 2" {
		t.Errorf("LATEST taken before the puts read %q", got)
	}
	if got := read(iterator(t, name, s0, ktypes.ShardIteratorTypeTrimHorizon, nil)); got != "0 1 2" {
		t.Errorf("TRIM_HORIZON read %q", got)
	}
	if got := read(iterator(t, name, s0, ktypes.ShardIteratorTypeLatest, nil)); got != "" {
		t.Errorf("LATEST after the puts read %q", got)
	}
	if got := read(iterator(t, name, s0, ktypes.ShardIteratorTypeAtSequenceNumber, aws.String(seqs[1]))); got != "1 2" {
		t.Errorf("AT_SEQUENCE_NUMBER of the second read %q", got)
	}
	if got := read(iterator(t, name, s0, ktypes.ShardIteratorTypeAfterSequenceNumber, aws.String(seqs[1]))); got != "2" {
		t.Errorf("AFTER_SEQUENCE_NUMBER of the second read %q", got)
	}
	gi, err := kc().GetShardIterator(ctx(t), &kinesis.GetShardIteratorInput{StreamName: aws.String(name), ShardId: aws.String(s0),
		ShardIteratorType: ktypes.ShardIteratorTypeAtTimestamp, Timestamp: aws.Time(time.Now().Add(-time.Hour))})
	if err != nil {
		t.Fatalf("AT_TIMESTAMP an hour ago: %v", err)
	}
	if got := read(gi.ShardIterator); got != "0 1 2" {
		t.Errorf("AT_TIMESTAMP an hour ago read %q", got)
	}

	_, err = kc().GetShardIterator(ctx(t), &kinesis.GetShardIteratorInput{StreamName: aws.String(name), ShardId: aws.String("shardId-000000000001"),
		ShardIteratorType: ktypes.ShardIteratorTypeAtSequenceNumber, StartingSequenceNumber: aws.String(seqs[0])})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" ||
		msg != "Invalid StartingSequenceNumber. It encodes shardId-000000000000, while it was used in a call to a shard with shardId-000000000001" {
		t.Errorf("a sequence number of another shard: %s %q", code, msg)
	}
	_, err = kc().GetShardIterator(ctx(t), &kinesis.GetShardIteratorInput{StreamName: aws.String(name), ShardId: aws.String(s0),
		ShardIteratorType: ktypes.ShardIteratorTypeAfterSequenceNumber})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || msg != "Must either specify (1) AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER and StartingSequenceNumber or (2) TRIM_HORIZON or LATEST and no StartingSequenceNumber. Request specified AFTER_SEQUENCE_NUMBER and no StartingSequenceNumber." {
		t.Errorf("AFTER_SEQUENCE_NUMBER without one: %s %q", code, msg)
	}
	_, err = kc().GetShardIterator(ctx(t), &kinesis.GetShardIteratorInput{StreamName: aws.String(name), ShardId: aws.String(s0),
		ShardIteratorType: ktypes.ShardIteratorTypeAtTimestamp})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || msg != "Must specify timestampInMillis parameter for iterator of type AT_TIMESTAMP. Current request has no timestamp parameter." {
		t.Errorf("AT_TIMESTAMP without a timestamp: %s %q", code, msg)
	}
	_, err = kc().GetShardIterator(ctx(t), &kinesis.GetShardIteratorInput{StreamName: aws.String(name), ShardId: aws.String("shardId-000000000005"),
		ShardIteratorType: ktypes.ShardIteratorTypeLatest})
	if code, msg := apiErr(t, err); code != "ResourceNotFoundException" || msg != "Shard shardId-000000000005 in stream "+name+" under account 000000000000 does not exist" {
		t.Errorf("an unknown shard: %s %q", code, msg)
	}
	_, err = kc().GetRecords(ctx(t), &kinesis.GetRecordsInput{ShardIterator: aws.String("AAAAAAAAAAFuT3RBbkl0ZXJhdG9y")})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || msg != "Invalid ShardIterator." {
		t.Errorf("a made-up iterator: %s %q", code, msg)
	}
}
