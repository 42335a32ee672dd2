package ddblocal

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// kinesisSnapshot is what a reader sees of a stream: its shards and, per
// shard, its records (sequence number and data).
func kinesisSnapshot(t *testing.T, kc *kinesis.Client, stream string) string {
	t.Helper()
	var b strings.Builder
	for _, sh := range allShards(t, kc, stream, nil) {
		fmt.Fprintf(&b, "%s<%s,%s>[%s..%s] %s-%s\n", aws.ToString(sh.ShardId), aws.ToString(sh.ParentShardId), aws.ToString(sh.AdjacentParentShardId),
			aws.ToString(sh.HashKeyRange.StartingHashKey), aws.ToString(sh.HashKeyRange.EndingHashKey),
			aws.ToString(sh.SequenceNumberRange.StartingSequenceNumber), aws.ToString(sh.SequenceNumberRange.EndingSequenceNumber))
		recs, _ := readShard(t, kc, stream, aws.ToString(sh.ShardId))
		for _, r := range recs {
			fmt.Fprintf(&b, "  %s %s %s\n", aws.ToString(r.SequenceNumber), aws.ToString(r.PartitionKey), r.Data)
		}
	}
	return b.String()
}

// TestK3_StreamsShardsRecordsAndDestinationsSurviveARestart: with a
// DataDir, a stream that split and merged, its records (put and written
// by a destination), a record held back by the reordering fault and the
// table's destination are all there after a restart, and new records
// take sequence numbers after the old ones.
func TestK3_StreamsShardsRecordsAndDestinationsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	opts := Options{DataDir: dir, TTLInterval: -1}
	srv, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatal(err)
	}
	db, kc := client(srv, 1), kclient(srv)
	destTable(t, srv, "tbl", 2, "")
	for i := 0; i < 6; i++ {
		putW(t, db, "tbl", fmt.Sprintf("i%d", i), "1")
	}
	ctx := context.Background()
	if _, err := srv.SplitKinesisShard(ctx, "tbl-changes", "shardId-000000000000"); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.MergeKinesisShards(ctx, "tbl-changes", "shardId-000000000003", "shardId-000000000001"); err != nil {
		t.Fatal(err)
	}
	for i := 0; i < 6; i++ {
		putW(t, db, "tbl", fmt.Sprintf("i%d", i), "2")
	}
	if _, err := kc.PutRecords(ctxT(t), &kinesis.PutRecordsInput{StreamName: aws.String("tbl-changes"), Records: []ktypes.PutRecordsRequestEntry{
		{PartitionKey: aws.String("p1"), Data: []byte(`{"put":1}`)}, {PartitionKey: aws.String("p2"), Data: []byte(`{"put":2}`)}}}); err != nil {
		t.Fatal(err)
	}
	before := kinesisSnapshot(t, kc, "tbl-changes")
	srv.SetKinesisFaults(KinesisFaults{ReorderRate: 1})
	putW(t, db, "tbl", "held", "1") // held back: stored, not yet in its shard
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	srv2, err := Start(context.Background(), opts)
	if err != nil {
		t.Fatalf("restart: %v", err)
	}
	defer srv2.Close()
	db2, kc2 := client(srv2, 1), kclient(srv2)
	shards, err := srv2.KinesisShards(ctx, "tbl-changes")
	if err != nil {
		t.Fatal(err)
	}
	held := 0
	for _, sh := range shards {
		if sh.Held {
			held++
		}
	}
	if held != 1 {
		t.Errorf("after the restart %d shards hold a record back, want 1", held)
	}
	after := kinesisSnapshot(t, kc2, "tbl-changes")
	if !strings.Contains(after, `"held"`) {
		t.Errorf("the held record was lost in the restart:\n%s", after)
	}
	// the read after the restart released the held record: every line
	// of the snapshot before is in the one after, which has it too
	for _, line := range strings.Split(strings.TrimSpace(before), "\n") {
		if !strings.Contains(after, line+"\n") {
			t.Errorf("after the restart, %q is missing:\n%s", line, after)
		}
	}
	putW(t, db2, "tbl", "new", "1")
	out, err := kc2.PutRecord(ctxT(t), &kinesis.PutRecordInput{StreamName: aws.String("tbl-changes"), PartitionKey: aws.String("p1"), Data: []byte(`{"put":3}`)})
	if err != nil {
		t.Fatal(err)
	}
	recs, _ := readShard(t, kc2, "tbl-changes", aws.ToString(out.ShardId))
	for _, r := range recs[:len(recs)-1] {
		if !seqLess(aws.ToString(r.SequenceNumber), aws.ToString(out.SequenceNumber)) {
			t.Errorf("a record put after the restart has sequence number %s, not after %s", aws.ToString(out.SequenceNumber), aws.ToString(r.SequenceNumber))
		}
	}
	_, changes := streamRecords(t, kc2, "tbl-changes")
	found := false
	for _, c := range changes {
		found = found || c.Dynamodb.Keys != nil && c.Dynamodb.Keys["pk"]["S"] == "new"
	}
	if !found {
		t.Errorf("a write after the restart did not reach the destination: it was not kept")
	}
}
