package ddblocal

import (
	"context"
	"errors"
	"fmt"
	"math"
	"regexp"
	"sort"
	"sync/atomic"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// A stream has four open shards by default, each taking one quarter of the
// partition-key hashes: every item's records (all sort keys of one
// partition key) stay in one shard, in write order, and the writes of many
// items spread over all four.
func TestC5_RecordsRoutedByPartitionKeyKeepItemOrder(t *testing.T) {
	srv := startServer(t, Options{})
	c, sc := client(srv, 1), streamsClient(srv)
	arn := streamTable(t, c, "routed", true)
	want := map[string]int{}
	for v := 1; v <= 3; v++ {
		for i := 0; i < 40; i++ {
			for _, sk := range []string{"x", "y"} {
				putV(t, c, "routed", fmt.Sprintf("p%02d", i), sk, v)
				want[fmt.Sprintf("p%02d/%s", i, sk)] = v
			}
		}
	}
	recs, shards := readLineage(t, sc, arn)
	if len(shards) != 4 {
		t.Fatalf("%d shards, want the 4 open ones", len(shards))
	}
	checkItemOrder(t, recs, want)
	shardOf := map[string]string{} // partition key -> shard
	perShard := map[string]int{}
	for _, r := range recs {
		pk := r.item[:3]
		if s, ok := shardOf[pk]; ok && s != r.shard {
			t.Fatalf("partition key %s has records in shards %s and %s", pk, s, r.shard)
		}
		shardOf[pk] = r.shard
		perShard[r.shard]++
	}
	if len(perShard) != 4 {
		t.Fatalf("records of 40 partition keys landed in %d shards, want all 4: %v", len(perShard), perShard)
	}
	infos, err := srv.StreamShards(ctxT(t), "routed")
	if err != nil {
		t.Fatal(err)
	}
	next := uint64(0)
	for i, in := range infos {
		if in.HashKeyStart != next || !in.Open() || in.Records != perShard[in.ShardID] {
			t.Fatalf("shard %d: %+v; want open, from hash %d, with the %d records read", i, in, next, perShard[in.ShardID])
		}
		next = in.HashKeyEnd + 1
	}
	if infos[3].HashKeyEnd != math.MaxUint64 {
		t.Fatalf("the open shards end at hash %d, not covering every key", infos[3].HashKeyEnd)
	}
}

// SplitShard closes a shard and opens two children with it as their
// parent, each taking half of its hashes: the closed parent ends at its
// last record, its children are what the CHILD_SHARDS filter lists, later
// records of its keys go to the child whose half holds them, and a reader
// that finishes the parent first reads every item in order.
func TestC5_SplitShardClosesItAndOpensTwoChildrenWithHalfItsKeys(t *testing.T) {
	srv := startServer(t, Options{})
	c, sc := client(srv, 1), streamsClient(srv)
	arn := streamTable(t, c, "split", false)
	want := map[string]int{}
	write := func(v int) {
		for i := 0; i < 24; i++ {
			putV(t, c, "split", fmt.Sprintf("k%02d", i), "", v)
			want[fmt.Sprintf("k%02d", i)] = v
		}
	}
	write(1)
	before, err := srv.StreamShards(ctxT(t), arn)
	if err != nil {
		t.Fatal(err)
	}
	parent := before[1]
	kids, err := srv.SplitShard(ctxT(t), "split", parent.ShardID)
	if err != nil {
		t.Fatal(err)
	}
	write(2)

	all := listShards(t, sc, arn, 0)
	if len(all) != 6 {
		t.Fatalf("%d shards after one split, want 4 + 2", len(all))
	}
	var p stypes.Shard
	for _, sh := range all {
		if *sh.ShardId == parent.ShardID {
			p = sh
		}
	}
	if p.SequenceNumberRange == nil || p.SequenceNumberRange.EndingSequenceNumber == nil {
		t.Fatalf("the split shard is not closed: %+v", p)
	}
	f, err := sc.DescribeStream(ctxT(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn),
		ShardFilter: &stypes.ShardFilter{Type: stypes.ShardFilterTypeChildShards, ShardId: aws.String(parent.ShardID)}})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, sh := range f.StreamDescription.Shards {
		got = append(got, *sh.ShardId)
		if aws.ToString(sh.ParentShardId) != parent.ShardID || sh.SequenceNumberRange.EndingSequenceNumber != nil {
			t.Fatalf("child %+v: want open, with parent %s", sh, parent.ShardID)
		}
	}
	if fmt.Sprint(got) != fmt.Sprint(kids) {
		t.Fatalf("CHILD_SHARDS of %s = %v, SplitShard returned %v", parent.ShardID, got, kids)
	}

	after, err := srv.StreamShards(ctxT(t), arn)
	if err != nil {
		t.Fatal(err)
	}
	byID := map[string]StreamShard{}
	for _, in := range after {
		byID[in.ShardID] = in
	}
	a, b := byID[kids[0]], byID[kids[1]]
	if a.HashKeyStart != parent.HashKeyStart || a.HashKeyEnd+1 != b.HashKeyStart || b.HashKeyEnd != parent.HashKeyEnd ||
		a.HashKeyEnd-a.HashKeyStart != b.HashKeyEnd-b.HashKeyStart {
		t.Fatalf("children take %d-%d and %d-%d; the parent took %d-%d: want its two halves",
			a.HashKeyStart, a.HashKeyEnd, b.HashKeyStart, b.HashKeyEnd, parent.HashKeyStart, parent.HashKeyEnd)
	}
	recs, _ := readLineage(t, sc, arn)
	checkItemOrder(t, recs, want)
	inParent := map[string]bool{}
	for _, r := range recs {
		if r.shard == parent.ShardID {
			inParent[r.item] = true
			if *p.SequenceNumberRange.EndingSequenceNumber < r.seq {
				t.Fatalf("record %s of the parent past its end %s", r.seq, *p.SequenceNumberRange.EndingSequenceNumber)
			}
		}
	}
	kidOf := map[string]string{}
	for _, r := range recs {
		if r.v == 2 && inParent[r.item] {
			kidOf[r.item] = r.shard
			if r.shard != kids[0] && r.shard != kids[1] {
				t.Fatalf("item %s of the split shard wrote version 2 into %s, not a child", r.item, r.shard)
			}
		}
	}
	if len(inParent) < 2 || byID[kids[0]].Records == 0 || byID[kids[1]].Records == 0 {
		t.Fatalf("want the split shard's items spread over both children: %v (children took %d and %d records)", kidOf, a.Records, b.Records)
	}
}

// A shard that took SplitAfterRecords records splits by itself, until the
// stream has MaxShards open shards; every split keeps the lineage: two
// children of one parent whose halves cover its range, read after it.
func TestC5_SplitAfterRecordsSplitsByItselfUpToMaxShards(t *testing.T) {
	srv := startServer(t, Options{Streams: StreamOptions{Shards: 2, SplitAfterRecords: 4, MaxShards: 7}})
	c, sc := client(srv, 1), streamsClient(srv)
	arn := streamTable(t, c, "auto", false)
	want := map[string]int{}
	for v := 1; v <= 6; v++ {
		for i := 0; i < 16; i++ {
			putV(t, c, "auto", fmt.Sprintf("i%02d", i), "", v)
			want[fmt.Sprintf("i%02d", i)] = v
		}
	}
	infos, err := srv.StreamShards(ctxT(t), "auto")
	if err != nil {
		t.Fatal(err)
	}
	open, children := 0, map[string][]StreamShard{}
	byID := map[string]StreamShard{}
	for _, in := range infos {
		byID[in.ShardID] = in
		if in.Open() {
			open++
		}
		if in.ParentShardID != "" {
			children[in.ParentShardID] = append(children[in.ParentShardID], in)
		}
	}
	if open != 7 {
		t.Fatalf("%d open shards, want MaxShards (7)", open)
	}
	splits := 0
	for pid, kids := range children {
		p := byID[pid]
		switch len(kids) {
		case 2:
			splits++
			if kids[0].HashKeyStart != p.HashKeyStart || kids[0].HashKeyEnd+1 != kids[1].HashKeyStart || kids[1].HashKeyEnd != p.HashKeyEnd {
				t.Fatalf("children of %s do not split its range in two: %+v %+v of %+v", pid, kids[0], kids[1], p)
			}
		case 1: // a rollover once splits stopped
			if kids[0].HashKeyStart != p.HashKeyStart || kids[0].HashKeyEnd != p.HashKeyEnd {
				t.Fatalf("the child of a rollover takes another range: %+v of %+v", kids[0], p)
			}
		default:
			t.Fatalf("shard %s has %d children", pid, len(kids))
		}
		if p.Open() {
			t.Fatalf("shard %s has children but is open", pid)
		}
	}
	if splits != 5 {
		t.Fatalf("%d splits, want 5 (2 shards to 7)", splits)
	}
	recs, _ := readLineage(t, sc, arn)
	checkItemOrder(t, recs, want)
}

// Each shard rolls over by itself: after ShardMaxRecords records, or at
// ShardMaxAge; its child takes the same keys.
func TestC5_EachShardRollsOverByRecordsAndByAge(t *testing.T) {
	var clock atomic.Int64
	clock.Store(time.Date(2026, 12, 1, 12, 0, 0, 0, time.UTC).UnixNano())
	now := func() time.Time { return time.Unix(0, clock.Load()) }
	srv := startServer(t, Options{Now: now, Streams: StreamOptions{Shards: 3, ShardMaxRecords: 2, ShardMaxAge: time.Hour}})
	c, sc := client(srv, 1), streamsClient(srv)
	arn := streamTable(t, c, "roll", false)
	putV(t, c, "roll", "one", "", 1)
	putV(t, c, "roll", "one", "", 2)
	putV(t, c, "roll", "one", "", 3) // the third record of one shard: a child takes it
	infos, err := srv.StreamShards(ctxT(t), arn)
	if err != nil {
		t.Fatal(err)
	}
	if len(infos) != 4 || infos[3].ParentShardID == "" || infos[3].Records != 1 {
		t.Fatalf("after 3 records of one item: %+v; want 3 shards and one child with the third record", infos)
	}
	var p StreamShard
	for _, in := range infos {
		if in.ShardID == infos[3].ParentShardID {
			p = in
		}
	}
	if p.Open() || p.Records != 2 || p.HashKeyStart != infos[3].HashKeyStart || p.HashKeyEnd != infos[3].HashKeyEnd {
		t.Fatalf("parent %+v of %+v: want closed after 2 records, with the child's keys", p, infos[3])
	}

	clock.Add(int64(time.Hour)) // every open shard reaches ShardMaxAge
	all := listShards(t, sc, arn, 0)
	closed := 0
	for _, sh := range all {
		if sh.SequenceNumberRange.EndingSequenceNumber != nil {
			closed++
		}
	}
	if len(all) != 7 || closed != 4 {
		t.Fatalf("an hour later: %d shards, %d closed; want every open shard rolled over (7 shards, 4 closed)", len(all), closed)
	}
	recs, _ := readLineage(t, sc, arn)
	checkItemOrder(t, recs, map[string]int{"one": 3})
}

// Shard ids have DynamoDB's shape and sort in creation order, so the
// listing (parents before children) is in id order and pages by
// ExclusiveStartShardId.
func TestC5_ShardIDsLookLikeDynamoDBsAndSortInCreationOrder(t *testing.T) {
	srv := startServer(t, Options{Streams: StreamOptions{ShardMaxRecords: 1}})
	c, sc := client(srv, 1), streamsClient(srv)
	arn := streamTable(t, c, "ids", false)
	for i := 0; i < 12; i++ {
		putV(t, c, "ids", fmt.Sprintf("x%d", i), "", 1)
	}
	infos, _ := srv.StreamShards(ctxT(t), arn)
	if _, err := srv.SplitShard(ctxT(t), arn, infos[len(infos)-1].ShardID); err != nil {
		t.Fatal(err)
	}
	all := listShards(t, sc, arn, 0)
	paged := listShards(t, sc, arn, 3)
	ids := make([]string, len(all))
	seen := map[string]bool{}
	for i, sh := range all {
		ids[i] = *sh.ShardId
		if !regexp.MustCompile(`^shardId-\d{20}-[0-9a-f]{8}$`).MatchString(ids[i]) {
			t.Fatalf("shard id %q", ids[i])
		}
		if p := aws.ToString(sh.ParentShardId); p != "" && !seen[p] {
			t.Fatalf("shard %s listed before its parent %s", ids[i], p)
		}
		seen[ids[i]] = true
		if *paged[i].ShardId != ids[i] {
			t.Fatalf("pages of 3 list %s at %d, one page %s", *paged[i].ShardId, i, ids[i])
		}
	}
	if !sort.StringsAreSorted(ids) || len(paged) != len(all) || len(all) < 12 {
		t.Fatalf("%d shards (%d paged), ids in order %v: %v", len(all), len(paged), sort.StringsAreSorted(ids), ids)
	}
}

// RollShard rolls an open shard over now, as ShardMaxAge would later:
// the shard closes, its one child takes the same keys and the item's next
// records; a closed shard is refused with an error callers can match.
func TestC5_RollShardClosesItAndOpensOneChildWithItsKeys(t *testing.T) {
	srv := startServer(t, Options{})
	c, sc := client(srv, 1), streamsClient(srv)
	ctx := ctxT(t)
	arn := streamTable(t, c, "rollnow", false)
	putV(t, c, "rollnow", "one", "", 1)
	infos, err := srv.StreamShards(ctx, arn)
	if err != nil {
		t.Fatal(err)
	}
	var p StreamShard
	for _, in := range infos {
		if in.Records == 1 {
			p = in
		}
	}
	kid, err := srv.RollShard(ctx, "rollnow", p.ShardID)
	if err != nil {
		t.Fatal(err)
	}
	putV(t, c, "rollnow", "one", "", 2)
	after, _ := srv.StreamShards(ctx, arn)
	var got StreamShard
	for _, in := range after {
		switch in.ShardID {
		case p.ShardID:
			if in.Open() {
				t.Errorf("shard %s rolled over but still open", p.ShardID)
			}
		case kid:
			got = in
		}
	}
	if got.ParentShardID != p.ShardID || got.HashKeyStart != p.HashKeyStart || got.HashKeyEnd != p.HashKeyEnd || got.Records != 1 || !got.Open() {
		t.Fatalf("child %+v of %+v: want it open, with the parent's keys and the item's second record", got, p)
	}
	if len(after) != len(infos)+1 {
		t.Fatalf("%d shards after one rollover of %d", len(after), len(infos))
	}
	if _, err := srv.RollShard(ctx, arn, p.ShardID); !errors.Is(err, ErrShardClosed) {
		t.Errorf("RollShard of a closed shard: %v, want ErrShardClosed", err)
	}
	if _, err := srv.RollShard(ctx, "nope", kid); !errors.Is(err, ErrStreamNotFound) {
		t.Errorf("RollShard of a table that does not exist: %v, want ErrStreamNotFound", err)
	}
	recs, _ := readLineage(t, sc, arn)
	checkItemOrder(t, recs, map[string]int{"one": 2})
}

// SplitShard refuses what cannot split, with an error callers can match.
func TestC5_SplitShardRefusesWhatCannotSplit(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	arn := streamTable(t, c, "refuse", false)
	mkTable(t, c, "plain", false)
	infos, _ := srv.StreamShards(ctx, arn)
	if _, err := srv.SplitShard(ctx, arn, infos[0].ShardID); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		target, shard string
		want          error
	}{
		{"nope", infos[1].ShardID, ErrStreamNotFound},
		{"plain", infos[1].ShardID, ErrStreamNotFound},
		{"arn:aws:dynamodb:us-east-1:000000000000:table/x/stream/2020-01-01T00:00:00.000", infos[1].ShardID, ErrStreamNotFound},
		{"refuse", "shardId-00000000000000000000-00000000", ErrShardNotFound},
		{"refuse", infos[0].ShardID, ErrShardClosed},
	} {
		_, err := srv.SplitShard(ctx, tc.target, tc.shard)
		if !errors.Is(err, tc.want) {
			t.Errorf("SplitShard(%s, %s): %v, want %v", tc.target, tc.shard, err, tc.want)
		}
	}
	if _, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("refuse"),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	if _, err := srv.SplitShard(ctx, arn, infos[1].ShardID); !errors.Is(err, ErrStreamDisabled) {
		t.Errorf("SplitShard of a disabled stream: %v", err)
	}
	if _, err := srv.SplitShard(context.Background(), "refuse", infos[1].ShardID); err == nil {
		t.Error("the table's stream is disabled: no stream to split")
	}
}

// With a DataDir, shards, their hash ranges and splits survive a restart:
// the same shards are listed, and an item's records keep going to the
// shard that took its earlier ones.
func TestC5_ShardsAndSplitsSurviveARestart(t *testing.T) {
	dir := t.TempDir()
	srv, err := Start(context.Background(), Options{DataDir: dir, TTLInterval: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := client(srv, 1)
	arn := streamTable(t, c, "kept", false)
	want := map[string]int{}
	for i := 0; i < 12; i++ {
		putV(t, c, "kept", fmt.Sprintf("k%d", i), "", 1)
		want[fmt.Sprintf("k%d", i)] = 1
	}
	infos, _ := srv.StreamShards(ctxT(t), arn)
	if _, err := srv.SplitShard(ctxT(t), arn, infos[2].ShardID); err != nil {
		t.Fatal(err)
	}
	before, _ := srv.StreamShards(ctxT(t), arn)
	beforeRecs, _ := readLineage(t, streamsClient(srv), arn)
	if err := srv.Close(); err != nil {
		t.Fatal(err)
	}

	srv2 := startServer(t, Options{DataDir: dir})
	c2, sc2 := client(srv2, 1), streamsClient(srv2)
	after, err := srv2.StreamShards(ctxT(t), arn)
	if err != nil {
		t.Fatal(err)
	}
	for i := range after {
		after[i].Records = before[i].Records // counts are not what the restart must keep
	}
	if fmt.Sprint(after) != fmt.Sprint(before) {
		t.Fatalf("shards after the restart:\n%+v\nbefore:\n%+v", after, before)
	}
	for i := 0; i < 12; i++ {
		putV(t, c2, "kept", fmt.Sprintf("k%d", i), "", 2)
		want[fmt.Sprintf("k%d", i)] = 2
	}
	recs, _ := readLineage(t, sc2, arn)
	checkItemOrder(t, recs, want)
	if len(beforeRecs) != 12 || len(recs) != 24 {
		t.Fatalf("%d records before the restart, %d after more writes; want 12 and 24", len(beforeRecs), len(recs))
	}
	byID := map[string]StreamShard{}
	for _, in := range after {
		byID[in.ShardID] = in
	}
	first := map[string]string{}
	for _, r := range recs {
		if r.v == 1 {
			first[r.item] = r.shard
			continue
		}
		// version 2 goes where version 1 went, or, if that shard was
		// split, into one of its children
		was := first[r.item]
		if r.shard != was && byID[r.shard].ParentShardID != was {
			t.Fatalf("item %s: version 1 in %s, version 2 in %s", r.item, was, r.shard)
		}
		if byID[was].Open() != (r.shard == was) {
			t.Fatalf("item %s: version 2 in %s, version 1 in %s (open %v)", r.item, r.shard, was, byID[was].Open())
		}
	}
}
