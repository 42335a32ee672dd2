package conformance

import (
	"fmt"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
	"github.com/dynafold/dynafold/ddblocal"
)

// Several open shards, splits and the DescribeStream paging and child
// filter they need: local only, because dynalite's streams have one shard
// that neither rolls over nor splits.

// versionedStreamTable creates a NEW_IMAGE stream table on a private
// server and returns its clients, name and stream ARN.
func versionedStreamTable(t testing.TB, srv *ddblocal.Server) (*dynamodb.Client, *dynamodbstreams.Client, string, string) {
	t.Helper()
	c, sc := ddbAt(srv.Endpoint()), streamsAt(srv.Endpoint())
	ks, ad := keySchema("")
	name := tableName(t)
	_, err := c.CreateTable(ctx(t), &dynamodb.CreateTableInput{TableName: aws.String(name), KeySchema: ks, AttributeDefinitions: ad,
		BillingMode: types.BillingModePayPerRequest, StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}})
	noErr(t, err, "CreateTable")
	d, err := c.DescribeTable(ctx(t), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	noErr(t, err, "DescribeTable")
	return c, sc, name, aws.ToString(d.Table.LatestStreamArn)
}

func putVersion(t testing.TB, c *dynamodb.Client, table, pk string, v int) {
	t.Helper()
	_, err := c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(table), Item: Item{"pk": s(pk), "v": n(strconv.Itoa(v))}})
	noErr(t, err, "PutItem")
}

// checkLineage fails unless every listed parent comes before its children
// in the listing, and returns each shard's listed children.
func checkLineage(t testing.TB, shards []st.Shard) map[string][]string {
	t.Helper()
	seen := map[string]bool{}
	kids := map[string][]string{}
	for _, sh := range shards {
		id, p := aws.ToString(sh.ShardId), aws.ToString(sh.ParentShardId)
		if p != "" {
			if !seen[p] {
				t.Fatalf("shard %s is listed before its parent %s", id, p)
			}
			kids[p] = append(kids[p], id)
		}
		seen[id] = true
	}
	return kids
}

func TestConformance_StreamsLocal_ItemOrderAcrossSplits(t *testing.T) {
	t.Parallel()
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1, Streams: ddblocal.StreamOptions{Shards: 4, SplitAfterRecords: 6, MaxShards: 12}})
	c, sc, name, arn := versionedStreamTable(t, srv)
	const items, versions = 20, 8
	for v := 1; v <= versions; v++ {
		for i := 0; i < items; i++ {
			putVersion(t, c, name, fmt.Sprintf("i%02d", i), v)
		}
		if v == 3 { // and one split on demand
			infos, err := srv.StreamShards(ctx(t), arn)
			noErr(t, err, "StreamShards")
			for _, in := range infos {
				if in.Open() && in.HashKeyEnd > in.HashKeyStart {
					_, err := srv.SplitShard(ctx(t), name, in.ShardID)
					noErr(t, err, "SplitShard")
					break
				}
			}
		}
	}
	recs, from := readStreamWith(t, sc, arn)
	_, shards := shardsOf(t, sc, arn)
	kids := checkLineage(t, shards)
	splits := 0
	for p, ks := range kids {
		if len(ks) == 2 {
			splits++
		} else if len(ks) != 1 {
			t.Fatalf("shard %s has %d children", p, len(ks))
		}
	}
	if splits < 3 {
		t.Fatalf("%d splits, want several", splits)
	}
	last, seqs := map[string]int{}, map[string]bool{}
	shardOf := map[string]string{}
	for i, r := range recs {
		img := fromStream(r.Dynamodb.NewImage)
		k := img["pk"].(*types.AttributeValueMemberS).Value
		ver, _ := strconv.Atoi(img["v"].(*types.AttributeValueMemberN).Value)
		if ver != last[k]+1 {
			t.Fatalf("item %s: version %d after %d (shard %s); an item's records keep write order across splits", k, ver, last[k], from[i])
		}
		last[k] = ver
		if seqs[*r.Dynamodb.SequenceNumber] {
			t.Fatalf("sequence number %s read twice", *r.Dynamodb.SequenceNumber)
		}
		seqs[*r.Dynamodb.SequenceNumber] = true
		// an item moves only from a shard to one of its children
		if prev, ok := shardOf[k]; ok && prev != from[i] {
			moved := false
			for _, kid := range kids[prev] {
				moved = moved || kid == from[i]
			}
			if !moved {
				t.Fatalf("item %s went from shard %s to %s, not one of its children", k, prev, from[i])
			}
		}
		shardOf[k] = from[i]
	}
	if len(recs) != items*versions || len(last) != items {
		t.Fatalf("%d records of %d items, want %d of %d", len(recs), len(last), items*versions, items)
	}
}

func TestConformance_StreamsLocal_DescribeStreamPages(t *testing.T) {
	t.Parallel()
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1, Streams: ddblocal.StreamOptions{Shards: 4, ShardMaxRecords: 1}})
	c, sc, name, arn := versionedStreamTable(t, srv)
	for i := 0; i < 30; i++ {
		putVersion(t, c, name, fmt.Sprintf("p%02d", i), 1)
	}
	_, all := shardsOf(t, sc, arn)
	checkLineage(t, all)
	if len(all) < 20 {
		t.Fatalf("%d shards, want many", len(all))
	}
	for _, limit := range []int32{1, 3, 7, 100} {
		var got []string
		var start *string
		for page := 0; ; page++ {
			out, err := sc.DescribeStream(ctx(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), Limit: aws.Int32(limit), ExclusiveStartShardId: start})
			noErr(t, err, "DescribeStream")
			d := out.StreamDescription
			if len(d.Shards) > int(limit) {
				t.Fatalf("Limit %d: a page of %d shards", limit, len(d.Shards))
			}
			for _, sh := range d.Shards {
				got = append(got, *sh.ShardId)
			}
			if d.LastEvaluatedShardId == nil {
				break
			}
			if *d.LastEvaluatedShardId != got[len(got)-1] {
				t.Fatalf("Limit %d: LastEvaluatedShardId %s is not the page's last shard %s", limit, *d.LastEvaluatedShardId, got[len(got)-1])
			}
			start = d.LastEvaluatedShardId
			if page > len(all) {
				t.Fatalf("Limit %d: no end after %d pages", limit, page)
			}
		}
		var want []string
		for _, sh := range all {
			want = append(want, *sh.ShardId)
		}
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("pages of %d list\n%v\none listing lists\n%v", limit, got, want)
		}
	}
	mid := all[len(all)/2].ShardId
	out, err := sc.DescribeStream(ctx(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: mid})
	noErr(t, err, "DescribeStream after a shard")
	if len(out.StreamDescription.Shards) != len(all)-len(all)/2-1 || *out.StreamDescription.Shards[0].ShardId != *all[len(all)/2+1].ShardId {
		t.Fatalf("after %s: %d shards from %s", *mid, len(out.StreamDescription.Shards), *out.StreamDescription.Shards[0].ShardId)
	}
}

func TestConformance_StreamsLocal_ChildShardsFilter(t *testing.T) {
	t.Parallel()
	srv := startOwnLocal(t, ddblocal.Options{TTLInterval: -1, Streams: ddblocal.StreamOptions{Shards: 2, ShardMaxRecords: 2}})
	c, sc, name, arn := versionedStreamTable(t, srv)
	for v := 1; v <= 3; v++ {
		putVersion(t, c, name, "rolled", v) // the third record rolls its shard over
	}
	infos, err := srv.StreamShards(ctx(t), arn)
	noErr(t, err, "StreamShards")
	var rolled, other string
	for _, in := range infos {
		switch {
		case in.Records == 2:
			rolled = in.ShardID
		case in.Open() && in.ParentShardID == "":
			other = in.ShardID
		}
	}
	split, err := srv.SplitShard(ctx(t), name, other)
	noErr(t, err, "SplitShard")
	children := func(of string) []string {
		out, err := sc.DescribeStream(ctx(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn),
			ShardFilter: &st.ShardFilter{Type: st.ShardFilterTypeChildShards, ShardId: aws.String(of)}})
		noErr(t, err, "DescribeStream CHILD_SHARDS")
		var ids []string
		for _, sh := range out.StreamDescription.Shards {
			if aws.ToString(sh.ParentShardId) != of {
				t.Fatalf("CHILD_SHARDS of %s lists %s, whose parent is %s", of, *sh.ShardId, aws.ToString(sh.ParentShardId))
			}
			ids = append(ids, *sh.ShardId)
		}
		return ids
	}
	if got := children(other); fmt.Sprint(got) != fmt.Sprint(split) {
		t.Fatalf("children of the split shard: %v, want %v", got, split)
	}
	if got := children(rolled); len(got) != 1 {
		t.Fatalf("children of the rolled-over shard: %v, want its one child", got)
	}
	if got := children(split[0]); len(got) != 0 {
		t.Fatalf("children of an open shard: %v, want none", got)
	}
	_, err = sc.DescribeStream(ctx(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn),
		ShardFilter: &st.ShardFilter{Type: "PARENT_SHARDS", ShardId: aws.String(other)}})
	requireValidation(t, err, "a ShardFilter type other than CHILD_SHARDS")
}
