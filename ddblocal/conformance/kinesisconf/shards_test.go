package kinesisconf

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"
)

// lineage describes shards as "id<parent,adjacent>[start..end]".
func lineage(shs []ktypes.Shard) string {
	var out []string
	for _, sh := range shs {
		out = append(out, fmt.Sprintf("%s<%s,%s>[%s..%s]", aws.ToString(sh.ShardId), aws.ToString(sh.ParentShardId), aws.ToString(sh.AdjacentParentShardId),
			aws.ToString(sh.HashKeyRange.StartingHashKey), aws.ToString(sh.HashKeyRange.EndingHashKey)))
	}
	return strings.Join(out, "\n")
}

// splitAndMerge splits shard 0 of a two-shard stream at 2^126 and merges
// its upper child with shard 1, with records put before, between and after.
func splitAndMerge(t *testing.T) string {
	t.Helper()
	name := createStream(t, 2)
	for i := 0; i < 4; i++ {
		put(t, name, fmt.Sprintf("before%d", i), "before")
	}
	if _, err := kc().SplitShard(ctx(t), &kinesis.SplitShardInput{StreamName: aws.String(name), ShardToSplit: aws.String("shardId-000000000000"),
		NewStartingHashKey: aws.String("85070591730234615865843651857942052864")}); err != nil {
		t.Fatalf("SplitShard: %v", err)
	}
	waitActive(t, name)
	for i := 0; i < 4; i++ {
		put(t, name, fmt.Sprintf("split%d", i), "split")
	}
	if _, err := kc().MergeShards(ctx(t), &kinesis.MergeShardsInput{StreamName: aws.String(name), ShardToMerge: aws.String("shardId-000000000003"),
		AdjacentShardToMerge: aws.String("shardId-000000000001")}); err != nil {
		t.Fatalf("MergeShards: %v", err)
	}
	waitActive(t, name)
	for i := 0; i < 4; i++ {
		put(t, name, fmt.Sprintf("merged%d", i), "merged")
	}
	return name
}

// TestConformance_KinesisSplitAndMergeLineage: a split closes its shard
// and opens two children dividing its hash keys at NewStartingHashKey; a
// merge closes two adjacent shards and opens one child naming both.
func TestConformance_KinesisSplitAndMergeLineage(t *testing.T) {
	name := splitAndMerge(t)
	all := shards(t, name)
	want := strings.Join([]string{
		"shardId-000000000000<,>[0..170141183460469231731687303715884105727]",
		"shardId-000000000001<,>[170141183460469231731687303715884105728..340282366920938463463374607431768211455]",
		"shardId-000000000002<shardId-000000000000,>[0..85070591730234615865843651857942052863]",
		"shardId-000000000003<shardId-000000000000,>[85070591730234615865843651857942052864..170141183460469231731687303715884105727]",
		"shardId-000000000004<shardId-000000000003,shardId-000000000001>[85070591730234615865843651857942052864..340282366920938463463374607431768211455]",
	}, "\n")
	if got := lineage(all); got != want {
		t.Errorf("shards:\n%s\nwant:\n%s", got, want)
	}
	closed := map[string]bool{}
	for _, sh := range all {
		closed[aws.ToString(sh.ShardId)] = sh.SequenceNumberRange.EndingSequenceNumber != nil
	}
	if !closed["shardId-000000000000"] || !closed["shardId-000000000001"] || !closed["shardId-000000000003"] || closed["shardId-000000000002"] || closed["shardId-000000000004"] {
		t.Errorf("closed shards %v, want 0, 1 and 3", closed)
	}
	// every record is in the shard open for its hash key when it was put
	count := map[string]map[string]int{}
	total := 0
	for _, sh := range all {
		id := aws.ToString(sh.ShardId)
		recs, _ := drain(t, name, id)
		count[id] = map[string]int{}
		for _, r := range recs {
			count[id][string(r.Data)]++
			total++
		}
	}
	if total != 12 {
		t.Errorf("read %d records, put 12", total)
	}
	if c := count["shardId-000000000000"]; c["split"]+c["merged"] > 0 {
		t.Errorf("shard 0 took records after its split: %v", c)
	}
	if c := count["shardId-000000000001"]; c["merged"] > 0 {
		t.Errorf("shard 1 took records after its merge: %v", c)
	}
	_, err := kc().SplitShard(ctx(t), &kinesis.SplitShardInput{StreamName: aws.String(name), ShardToSplit: aws.String("shardId-000000000002"), NewStartingHashKey: aws.String("1")})
	if code, msg := apiErr(t, err); code != "InvalidArgumentException" || msg != "NewStartingHashKey 1 used in SplitShard() on shard shardId-000000000002 in stream "+name+
		" under account 000000000000 is not both greater than one plus the shard's StartingHashKey 0 and less than the shard's EndingHashKey 85070591730234615865843651857942052863." {
		t.Errorf("splitting at the first hash key: %s %q", code, msg)
	}
	_, err = kc().MergeShards(ctx(t), &kinesis.MergeShardsInput{StreamName: aws.String(name), ShardToMerge: aws.String("shardId-000000000002"), AdjacentShardToMerge: aws.String("shardId-000000000009")})
	if code, msg := apiErr(t, err); code != "ResourceNotFoundException" || msg != "Could not find shard shardId-000000000009 in stream "+name+" under account 000000000000." {
		t.Errorf("merging with an unknown shard: %s %q", code, msg)
	}
}

// TestConformance_KinesisReaderFindsADrainedShardsChildrenByListing: a
// reader that drains a closed shard (GetRecords ends with a null
// NextShardIterator) finds the shard's children by listing the shards and
// reads them after it, so an item's records come parents first.
func TestConformance_KinesisReaderFindsADrainedShardsChildrenByListing(t *testing.T) {
	name := splitAndMerge(t)
	done := map[string]bool{}
	var order []string
	var read func(id string)
	read = func(id string) {
		recs, last := drain(t, name, id)
		for _, r := range recs {
			order = append(order, string(r.Data))
		}
		if last.NextShardIterator != nil {
			return // open: its children come later, if ever
		}
		done[id] = true
		var kids []string
		for _, sh := range shards(t, name) {
			if aws.ToString(sh.ParentShardId) == id || aws.ToString(sh.AdjacentParentShardId) == id {
				kids = append(kids, aws.ToString(sh.ShardId))
			}
		}
		sort.Strings(kids)
		for _, k := range kids {
			ready := true
			for _, sh := range shards(t, name) {
				if aws.ToString(sh.ShardId) == k {
					for _, p := range []string{aws.ToString(sh.ParentShardId), aws.ToString(sh.AdjacentParentShardId)} {
						ready = ready && (p == "" || done[p])
					}
				}
			}
			if ready && !done[k] {
				read(k)
			}
		}
	}
	read("shardId-000000000000")
	read("shardId-000000000001")
	for _, id := range []string{"shardId-000000000000", "shardId-000000000001", "shardId-000000000003"} {
		if !done[id] {
			t.Errorf("%s was never read to its end", id)
		}
	}
	if len(order) != 12 {
		t.Errorf("read %d records by following the lineage, want 12: %v", len(order), order)
	}
}

// TestConformance_KinesisDrainedShardNamesItsChildShards: the GetRecords
// call that ends a closed shard lists its ChildShards.
func TestConformance_KinesisDrainedShardNamesItsChildShards(t *testing.T) {
	skipOnKinesalite(t, "does not fill ChildShards when a closed shard is drained")
	name := splitAndMerge(t)
	want := map[string]string{
		"shardId-000000000000": "shardId-000000000002<shardId-000000000000> shardId-000000000003<shardId-000000000000>",
		"shardId-000000000001": "shardId-000000000004<shardId-000000000003,shardId-000000000001>",
		"shardId-000000000003": "shardId-000000000004<shardId-000000000003,shardId-000000000001>",
	}
	for id, w := range want {
		_, last := drain(t, name, id)
		if last.NextShardIterator != nil {
			t.Fatalf("%s: no end", id)
		}
		var got []string
		for _, c := range last.ChildShards {
			got = append(got, aws.ToString(c.ShardId)+"<"+strings.Join(c.ParentShards, ",")+">")
		}
		if strings.Join(got, " ") != w {
			t.Errorf("%s: ChildShards %q, want %q", id, strings.Join(got, " "), w)
		}
	}
}

// TestConformance_KinesisListShardsFilters: ListShards' ShardFilter picks
// the open shards (AT_LATEST), the first of each lineage
// (AT_TRIM_HORIZON), every shard (FROM_TRIM_HORIZON) or those after a
// shard id (AFTER_SHARD_ID).
func TestConformance_KinesisListShardsFilters(t *testing.T) {
	skipOnKinesalite(t, "ignores ListShards' ShardFilter")
	name := splitAndMerge(t)
	cases := map[ktypes.ShardFilterType]string{
		ktypes.ShardFilterTypeAtLatest:        "shardId-000000000002 shardId-000000000004",
		ktypes.ShardFilterTypeAtTrimHorizon:   "shardId-000000000000 shardId-000000000001",
		ktypes.ShardFilterTypeFromTrimHorizon: "shardId-000000000000 shardId-000000000001 shardId-000000000002 shardId-000000000003 shardId-000000000004",
		ktypes.ShardFilterTypeAfterShardId:    "shardId-000000000003 shardId-000000000004",
	}
	for typ, want := range cases {
		f := &ktypes.ShardFilter{Type: typ}
		if typ == ktypes.ShardFilterTypeAfterShardId {
			f.ShardId = aws.String("shardId-000000000002")
		}
		ls, err := kc().ListShards(ctx(t), &kinesis.ListShardsInput{StreamName: aws.String(name), ShardFilter: f})
		if err != nil {
			t.Fatalf("ListShards %s: %v", typ, err)
		}
		var got []string
		for _, sh := range ls.Shards {
			got = append(got, aws.ToString(sh.ShardId))
		}
		if strings.Join(got, " ") != want {
			t.Errorf("ShardFilter %s: %q, want %q", typ, strings.Join(got, " "), want)
		}
	}
}
