package kinesisconf

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
)

// TestConformance_KinesisConstraintViolations: values outside a member's
// constraints are refused with a ValidationException in Kinesis's "N
// validation error(s) detected" form, naming the member.
func TestConformance_KinesisConstraintViolations(t *testing.T) {
	name := createStream(t, 1)
	_, err := kc().SplitShard(ctx(t), &kinesis.SplitShardInput{StreamName: aws.String(name), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String("1x")})
	if code, msg := apiErr(t, err); code != "ValidationException" ||
		msg != `1 validation error detected: Value '1x' at 'newStartingHashKey' failed to satisfy constraint: Member must satisfy regular expression pattern: 0|([1-9]\d{0,38})` {
		t.Errorf("SplitShard at 1x: %s %q", code, msg)
	}
	_, err = kc().DescribeStream(ctx(t), &kinesis.DescribeStreamInput{StreamName: aws.String("a/b")})
	if code, msg := apiErr(t, err); code != "ValidationException" ||
		msg != "1 validation error detected: Value 'a/b' at 'streamName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+" {
		t.Errorf("DescribeStream of a/b: %s %q", code, msg)
	}
}

// TestConformance_KinesisGetRecordsLimitZeroIsRefused: GetRecords' Limit
// is at least 1, as the API reference says.
func TestConformance_KinesisGetRecordsLimitZeroIsRefused(t *testing.T) {
	skipOnKinesalite(t, "answers GetRecords with Limit 0 (the reference's minimum is 1)")
	name := createStream(t, 1)
	it := iterator(t, name, "shardId-000000000000", "TRIM_HORIZON", nil)
	_, err := kc().GetRecords(ctx(t), &kinesis.GetRecordsInput{ShardIterator: it, Limit: aws.Int32(0)})
	if code, msg := apiErr(t, err); code != "ValidationException" ||
		msg != "1 validation error detected: Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1" {
		t.Errorf("GetRecords Limit 0: %s %q", code, msg)
	}
}
