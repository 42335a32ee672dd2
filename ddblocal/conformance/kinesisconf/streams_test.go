package kinesisconf

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// TestConformance_KinesisCreateDescribeListDelete: a stream's description,
// its shards dividing the hash keys evenly, ListStreams, and the errors
// for a stream that exists or does not.
func TestConformance_KinesisCreateDescribeListDelete(t *testing.T) {
	name := createStream(t, 3)
	d, err := kc().DescribeStream(ctx(t), &kinesis.DescribeStreamInput{StreamName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	sd := d.StreamDescription
	if want := "arn:aws:kinesis:us-east-1:000000000000:stream/" + name; aws.ToString(sd.StreamARN) != want {
		t.Errorf("StreamARN %q, want %q", aws.ToString(sd.StreamARN), want)
	}
	if aws.ToInt32(sd.RetentionPeriodHours) != 24 || sd.StreamStatus != ktypes.StreamStatusActive || aws.ToBool(sd.HasMoreShards) {
		t.Errorf("description %+v", sd)
	}
	var got []string
	for _, sh := range sd.Shards {
		got = append(got, fmt.Sprintf("%s[%s..%s] parent=%q", aws.ToString(sh.ShardId), aws.ToString(sh.HashKeyRange.StartingHashKey),
			aws.ToString(sh.HashKeyRange.EndingHashKey), aws.ToString(sh.ParentShardId)))
		if sh.SequenceNumberRange.StartingSequenceNumber == nil || sh.SequenceNumberRange.EndingSequenceNumber != nil {
			t.Errorf("a new shard's sequence number range %+v", sh.SequenceNumberRange)
		}
	}
	want := []string{
		`shardId-000000000000[0..113427455640312821154458202477256070484] parent=""`,
		`shardId-000000000001[113427455640312821154458202477256070485..226854911280625642308916404954512140969] parent=""`,
		`shardId-000000000002[226854911280625642308916404954512140970..340282366920938463463374607431768211455] parent=""`,
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("shards:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	sum, err := kc().DescribeStreamSummary(ctx(t), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
	if err != nil || aws.ToInt32(sum.StreamDescriptionSummary.OpenShardCount) != 3 {
		t.Errorf("DescribeStreamSummary: %v %+v", err, sum)
	}
	ls, err := kc().ListStreams(ctx(t), &kinesis.ListStreamsInput{ExclusiveStartStreamName: aws.String(name[:len(name)-1])})
	if err != nil || len(ls.StreamNames) == 0 || ls.StreamNames[0] != name {
		t.Errorf("ListStreams after %q: %v %+v", name[:len(name)-1], err, ls)
	}

	_, err = kc().CreateStream(ctx(t), &kinesis.CreateStreamInput{StreamName: aws.String(name), ShardCount: aws.Int32(1)})
	if code, msg := apiErr(t, err); code != "ResourceInUseException" || msg != "Stream "+name+" under account 000000000000 already exists." {
		t.Errorf("CreateStream again: %s %q", code, msg)
	}
	_, err = kc().DescribeStream(ctx(t), &kinesis.DescribeStreamInput{StreamName: aws.String(name + "x")})
	if code, msg := apiErr(t, err); code != "ResourceNotFoundException" || msg != "Stream "+name+"x under account 000000000000 not found." {
		t.Errorf("DescribeStream of no stream: %s %q", code, msg)
	}
	_, err = kc().CreateStream(ctx(t), &kinesis.CreateStreamInput{StreamName: aws.String(name + "z"), ShardCount: aws.Int32(0)})
	if code, msg := apiErr(t, err); code != "ValidationException" ||
		msg != "1 validation error detected: Value '0' at 'shardCount' failed to satisfy constraint: Member must have value greater than or equal to 1" {
		t.Errorf("CreateStream of 0 shards: %s %q", code, msg)
	}
	if _, err := kc().DeleteStream(ctx(t), &kinesis.DeleteStreamInput{StreamName: aws.String(name)}); err != nil {
		t.Fatalf("DeleteStream: %v", err)
	}
	waitGone(t, name)
}

// waitGone polls until DescribeStreamSummary says the stream does not
// exist (Kinesis keeps a deleted stream DELETING for a while).
func waitGone(t *testing.T, name string) {
	t.Helper()
	for i := 0; ; i++ {
		_, err := kc().DescribeStreamSummary(ctx(t), &kinesis.DescribeStreamSummaryInput{StreamName: aws.String(name)})
		if err != nil {
			if code, _ := apiErr(t, err); code != "ResourceNotFoundException" {
				t.Fatalf("DescribeStreamSummary of a deleted stream: %v", err)
			}
			return
		}
		if i == 3000 {
			t.Fatalf("stream %s still there after DeleteStream", name)
		}
		sleep()
	}
}

// TestConformance_KinesisStreamARNAloneNamesAStream: a request may name
// its stream by StreamARN only, as the API reference allows.
func TestConformance_KinesisStreamARNAloneNamesAStream(t *testing.T) {
	skipOnKinesalite(t, "refuses a request naming its stream by StreamARN only (streamName must not be null)")
	name := createStream(t, 1)
	arn := "arn:aws:kinesis:us-east-1:000000000000:stream/" + name
	if _, err := kc().PutRecord(ctx(t), &kinesis.PutRecordInput{StreamARN: aws.String(arn), PartitionKey: aws.String("k"), Data: []byte("x")}); err != nil {
		t.Fatalf("PutRecord by ARN: %v", err)
	}
	ls, err := kc().ListShards(ctx(t), &kinesis.ListShardsInput{StreamARN: aws.String(arn)})
	if err != nil || len(ls.Shards) != 1 {
		t.Fatalf("ListShards by ARN: %v %+v", err, ls)
	}
	gi, err := kc().GetShardIterator(ctx(t), &kinesis.GetShardIteratorInput{StreamARN: aws.String(arn), ShardId: ls.Shards[0].ShardId, ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatalf("GetShardIterator by ARN: %v", err)
	}
	gr, err := kc().GetRecords(ctx(t), &kinesis.GetRecordsInput{ShardIterator: gi.ShardIterator, StreamARN: aws.String(arn)})
	if err != nil || len(gr.Records) != 1 {
		t.Errorf("GetRecords: %v %+v", err, gr)
	}
}
