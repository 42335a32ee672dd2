package conformance

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_Streams_RecordFormat checks the documented shapes of stream
// identifiers and record fields (StreamRecord, Record, TableDescription).
func TestConformance_Streams_RecordFormat(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name, arn := streamTable(t, types.StreamViewTypeNewImage)
	d := waitActive(t, name)
	label := aws.ToString(d.LatestStreamLabel)
	// TableDescription: LatestStreamLabel is an ISO 8601 timestamp.
	if _, err := time.Parse("2006-01-02T15:04:05.000", label); err != nil {
		t.Errorf("LatestStreamLabel %q is not an ISO 8601 timestamp like 2015-05-11T21:21:33.291: %v", label, err)
	}
	if !regexp.MustCompile(`^arn:aws:dynamodb:[a-z0-9-]+:\d{12}:table/` + regexp.QuoteMeta(name) + `/stream/` + regexp.QuoteMeta(label) + `$`).MatchString(arn) {
		t.Errorf("LatestStreamArn %q, want arn:aws:dynamodb:<region>:<account>:table/%s/stream/%s", arn, name, label)
	}
	before := time.Now().Add(-time.Second)
	put(t, name, Item{"pk": s("a")}, Item{"pk": s("b")})
	after := time.Now().Add(time.Second)
	recs := readStream(t, arn)
	if len(recs) != 2 {
		t.Fatalf("want 2 records, got %d", len(recs))
	}
	ids := map[string]bool{}
	for i, r := range recs {
		if aws.ToString(r.EventVersion) != "1.1" {
			t.Errorf("record %d eventVersion %q, want 1.1", i, aws.ToString(r.EventVersion))
		}
		if aws.ToString(r.AwsRegion) != region {
			t.Errorf("record %d awsRegion %q, want %s", i, aws.ToString(r.AwsRegion), region)
		}
		ids[aws.ToString(r.EventID)] = true
		ct := r.Dynamodb.ApproximateCreationDateTime
		// Rounded down to the second, so allow a second either side.
		if ct == nil || ct.Before(before.Truncate(time.Second)) || ct.After(after) {
			t.Errorf("record %d ApproximateCreationDateTime %v, want between %v and %v", i, ct, before, after)
		}
		if !regexp.MustCompile(`^\d+$`).MatchString(aws.ToString(r.Dynamodb.SequenceNumber)) {
			t.Errorf("record %d SequenceNumber %q, want decimal digits", i, aws.ToString(r.Dynamodb.SequenceNumber))
		}
	}
	if len(ids) != 2 {
		t.Errorf("eventIDs are not unique: %v", ids)
	}
	_, shards := shardsOf(t, streams(t), arn)
	for _, sh := range shards {
		if !strings.HasPrefix(aws.ToString(sh.ShardId), "shardId-") {
			t.Errorf("ShardId %q, want shardId-...", aws.ToString(sh.ShardId))
		}
	}
}
