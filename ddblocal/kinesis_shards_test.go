package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// TestK3_SplitAndMergeKeepLineageAndEndShardsWithChildShards splits and
// merges shards through the API, checks the lineage ListShards shows, that
// new records go to the children only, and that GetRecords ends a drained
// closed shard (NextShardIterator null) naming its children.
func TestK3_SplitAndMergeKeepLineageAndEndShardsWithChildShards(t *testing.T) {
	srv := startServer(t, Options{})
	kc := kclient(srv)
	ctx := ctxT(t)
	mkStream(t, kc, "s", 2)
	put := func(pk string, n int) {
		for i := 0; i < n; i++ {
			if _, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String(fmt.Sprintf("%s%d", pk, i)), Data: []byte(pk)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	put("before", 10)
	shards := allShards(t, kc, "s", nil)
	s0 := shards[0]
	mid := "85070591730234615865843651857942052864" // 2^126: the middle of shard 0's range [0, 2^127-1]
	if _, err := kc.SplitShard(ctx, &kinesis.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: s0.ShardId, NewStartingHashKey: aws.String(mid)}); err != nil {
		t.Fatalf("SplitShard: %v", err)
	}
	put("split", 10)
	// merge the upper child of the split with the old shard 1
	if _, err := kc.MergeShards(ctx, &kinesis.MergeShardsInput{StreamARN: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/s"),
		ShardToMerge: aws.String("shardId-000000000003"), AdjacentShardToMerge: aws.String("shardId-000000000001")}); err != nil {
		t.Fatalf("MergeShards: %v", err)
	}
	put("merged", 10)
	shards = allShards(t, kc, "s", nil)
	got := []string{}
	for _, sh := range shards {
		end := "open"
		if sh.SequenceNumberRange.EndingSequenceNumber != nil {
			end = "closed"
		}
		got = append(got, fmt.Sprintf("%s<%s,%s>%s[%s..%s]", aws.ToString(sh.ShardId), aws.ToString(sh.ParentShardId), aws.ToString(sh.AdjacentParentShardId),
			end, aws.ToString(sh.HashKeyRange.StartingHashKey), aws.ToString(sh.HashKeyRange.EndingHashKey)))
	}
	want := []string{
		"shardId-000000000000<,>closed[0..170141183460469231731687303715884105727]",
		"shardId-000000000001<,>closed[170141183460469231731687303715884105728..340282366920938463463374607431768211455]",
		"shardId-000000000002<shardId-000000000000,>open[0..85070591730234615865843651857942052863]",
		"shardId-000000000003<shardId-000000000000,>closed[85070591730234615865843651857942052864..170141183460469231731687303715884105727]",
		"shardId-000000000004<shardId-000000000003,shardId-000000000001>open[85070591730234615865843651857942052864..340282366920938463463374607431768211455]",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("shards:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	kinds := map[string]map[string]int{} // shard -> data -> count
	total := 0
	for _, sh := range shards {
		id := aws.ToString(sh.ShardId)
		recs, last := readShard(t, kc, "s", id)
		kinds[id] = map[string]int{}
		for _, r := range recs {
			kinds[id][string(r.Data)]++
			total++
		}
		closed := sh.SequenceNumberRange.EndingSequenceNumber != nil
		if closed != (last.NextShardIterator == nil) {
			t.Errorf("%s: closed %v but the last GetRecords NextShardIterator is %v", id, closed, last.NextShardIterator)
		}
		if closed {
			var kids []string
			for _, c := range last.ChildShards {
				kids = append(kids, aws.ToString(c.ShardId)+"<"+strings.Join(c.ParentShards, ",")+">")
			}
			wantKids := map[string]string{
				"shardId-000000000000": "shardId-000000000002<shardId-000000000000> shardId-000000000003<shardId-000000000000>",
				"shardId-000000000001": "shardId-000000000004<shardId-000000000003,shardId-000000000001>",
				"shardId-000000000003": "shardId-000000000004<shardId-000000000003,shardId-000000000001>",
			}[id]
			if strings.Join(kids, " ") != wantKids {
				t.Errorf("%s drained: ChildShards %q, want %q", id, strings.Join(kids, " "), wantKids)
			}
		}
	}
	if total != 30 {
		t.Errorf("read %d records, put 30", total)
	}
	if k := kinds["shardId-000000000000"]; k["split"]+k["merged"] != 0 || k["before"] == 0 {
		t.Errorf("shard 0 took records after it split, or none before: %v", k)
	}
	if k := kinds["shardId-000000000001"]; k["merged"] != 0 || k["split"] == 0 {
		t.Errorf("shard 1 took records after it merged, or none before: %v", k)
	}
	if kinds["shardId-000000000003"]["merged"] != 0 || kinds["shardId-000000000002"]["before"] != 0 || kinds["shardId-000000000004"]["split"] != 0 {
		t.Errorf("records in a shard that was not open when they were put: %v", kinds)
	}

	_, err := kc.SplitShard(ctx, &kinesis.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000000"), NewStartingHashKey: aws.String(mid)})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || !strings.Contains(msg, "has already been merged or split, and thus is not eligible for splitting") {
		t.Errorf("splitting a closed shard: %s %q", code, msg)
	}
	_, err = kc.SplitShard(ctx, &kinesis.SplitShardInput{StreamName: aws.String("s"), ShardToSplit: aws.String("shardId-000000000002"), NewStartingHashKey: aws.String("1")})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || !strings.Contains(msg, "is not both greater than one plus the shard's StartingHashKey 0") {
		t.Errorf("splitting at the shard's first hash key: %s %q", code, msg)
	}
	_, err = kc.MergeShards(ctx, &kinesis.MergeShardsInput{StreamName: aws.String("s"), ShardToMerge: aws.String("shardId-000000000002"), AdjacentShardToMerge: aws.String("shardId-000000000009")})
	if code, msg := apiErr(t, err); code != "ResourceNotFoundException" || msg != "Could not find shard shardId-000000000009 in stream s under account 000000000000." {
		t.Errorf("merging with an unknown shard: %s %q", code, msg)
	}
	mkStream(t, kc, "three", 3)
	_, err = kc.MergeShards(ctx, &kinesis.MergeShardsInput{StreamName: aws.String("three"), ShardToMerge: aws.String("shardId-000000000000"), AdjacentShardToMerge: aws.String("shardId-000000000002")})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || !strings.Contains(msg, "are not an adjacent pair of shards eligible for merging") {
		t.Errorf("merging shards that are not adjacent: %s %q", code, msg)
	}
}

// TestK3_ListShardsFiltersByShardFilter lists a stream's shards with every
// ShardFilter type on a stream that split and merged, on a clock the test
// moves, and pages through them with MaxResults and NextToken.
func TestK3_ListShardsFiltersByShardFilter(t *testing.T) {
	clock := newFakeClock()
	t0 := clock.Now()
	srv := startServer(t, Options{Now: clock.Now})
	kc := kclient(srv)
	ctx := ctxT(t)
	mkStream(t, kc, "s", 2)
	clock.Add(time.Minute)
	if _, err := srv.SplitKinesisShard(ctx, "s", "shardId-000000000000"); err != nil { // 2, 3 at t0+1m
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	if _, err := srv.MergeKinesisShards(ctx, "s", "shardId-000000000003", "shardId-000000000001"); err != nil { // 4 at t0+2m
		t.Fatal(err)
	}
	clock.Add(time.Minute)
	at := func(d time.Duration) *time.Time { return aws.Time(t0.Add(d)) }
	cases := []struct {
		f    ktypes.ShardFilter
		want string
	}{
		{ktypes.ShardFilter{Type: ktypes.ShardFilterTypeAtLatest}, "2 4"},
		{ktypes.ShardFilter{Type: ktypes.ShardFilterTypeAtTrimHorizon}, "0 1"},
		{ktypes.ShardFilter{Type: ktypes.ShardFilterTypeFromTrimHorizon}, "0 1 2 3 4"},
		{ktypes.ShardFilter{Type: ktypes.ShardFilterTypeAfterShardId, ShardId: aws.String("shardId-000000000002")}, "3 4"},
		{ktypes.ShardFilter{Type: ktypes.ShardFilterTypeAtTimestamp, Timestamp: at(90 * time.Second)}, "1 2 3"},
		{ktypes.ShardFilter{Type: ktypes.ShardFilterTypeFromTimestamp, Timestamp: at(90 * time.Second)}, "1 2 3 4"},
		{ktypes.ShardFilter{Type: ktypes.ShardFilterTypeAtTimestamp, Timestamp: at(-time.Hour)}, "0 1"},
	}
	for _, c := range cases {
		f := c.f
		var got []string
		for _, id := range shardIDs(allShards(t, kc, "s", &f)) {
			got = append(got, strings.TrimLeft(strings.TrimPrefix(id, "shardId-"), "0"))
		}
		if g := fix0(got); g != c.want {
			t.Errorf("ShardFilter %s %v: shards %q, want %q", c.f.Type, aws.ToTime(c.f.Timestamp), g, c.want)
		}
	}
	_, err := kc.ListShards(ctx, &kinesis.ListShardsInput{})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || msg != "Either NextToken or StreamName should be provided." {
		t.Errorf("ListShards naming nothing: %s %q", code, msg)
	}
	first, err := kc.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String("s"), MaxResults: aws.Int32(1)})
	if err != nil || first.NextToken == nil {
		t.Fatalf("ListShards MaxResults 1: %v %+v", err, first)
	}
	_, err = kc.ListShards(ctx, &kinesis.ListShardsInput{StreamName: aws.String("s"), NextToken: first.NextToken})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || msg != "NextToken and StreamName cannot be provided together." {
		t.Errorf("ListShards with NextToken and StreamName: %s %q", code, msg)
	}
}

// fix0 writes shard numbers "", "1", ... (leading zeros trimmed) as "0 1 ...".
func fix0(nums []string) string {
	out := make([]string, len(nums))
	for i, n := range nums {
		if n == "" {
			n = "0"
		}
		out[i] = n
	}
	return strings.Join(out, " ")
}

// TestK3_GoAPISplitsMergesAndListsShardsWithTypedErrors: the Go calls a
// test uses to force a split or merge answer errors callers can match.
func TestK3_GoAPISplitsMergesAndListsShardsWithTypedErrors(t *testing.T) {
	srv := startServer(t, Options{})
	kc := kclient(srv)
	ctx := context.Background()
	arn := mkStream(t, kc, "s", 3)
	ids, err := srv.SplitKinesisShard(ctx, arn, "shardId-000000000001")
	if err != nil || strings.Join(ids, " ") != "shardId-000000000003 shardId-000000000004" {
		t.Fatalf("SplitKinesisShard: %v %v", ids, err)
	}
	if _, err := srv.SplitKinesisShard(ctx, "s", "shardId-000000000001"); !errors.Is(err, ErrKinesisShardClosed) {
		t.Errorf("splitting a closed shard: %v, want ErrKinesisShardClosed", err)
	}
	if _, err := srv.SplitKinesisShard(ctx, "nope", "shardId-000000000000"); !errors.Is(err, ErrKinesisStreamNotFound) {
		t.Errorf("splitting in no stream: %v, want ErrKinesisStreamNotFound", err)
	}
	if _, err := srv.MergeKinesisShards(ctx, "s", "shardId-000000000000", "shardId-000000000002"); !errors.Is(err, ErrKinesisShardsNotAdjacent) {
		t.Errorf("merging shards not adjacent: %v, want ErrKinesisShardsNotAdjacent", err)
	}
	if _, err := srv.MergeKinesisShards(ctx, "s", "shardId-000000000000", "shardId-000000000042"); !errors.Is(err, ErrKinesisShardNotFound) {
		t.Errorf("merging an unknown shard: %v, want ErrKinesisShardNotFound", err)
	}
	id, err := srv.MergeKinesisShards(ctx, "s", "shardId-000000000000", "shardId-000000000003")
	if err != nil || id != "shardId-000000000005" {
		t.Fatalf("MergeKinesisShards: %q %v", id, err)
	}
	shards, err := srv.KinesisShards(ctx, "s")
	if err != nil || len(shards) != 6 {
		t.Fatalf("KinesisShards: %v %+v", err, shards)
	}
	open := 0
	for _, sh := range shards {
		if sh.Open() {
			open++
		}
	}
	if open != 3 || shards[5].ParentShardID != "shardId-000000000000" || shards[5].AdjacentParentShardID != "shardId-000000000003" {
		t.Errorf("after a split and a merge: %d open (want 3), the merged child %+v", open, shards[5])
	}
	// the API still works on the stream the Go calls changed
	if _, err := kc.PutRecord(ctx, &kinesis.PutRecordInput{StreamName: aws.String("s"), PartitionKey: aws.String("k"), Data: []byte("x")}); err != nil {
		t.Errorf("PutRecord after Go splits and merges: %v", err)
	}
}
