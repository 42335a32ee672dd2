package ddblocal

import (
	"context"
	"fmt"
	"strconv"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// streamTable creates a table keyed pk [+ sk] with a NEW_IMAGE stream and
// returns the stream's ARN.
func streamTable(t *testing.T, c *dynamodb.Client, name string, withSort bool) string {
	t.Helper()
	mkTable(t, c, name, withSort, func(in *dynamodb.CreateTableInput) {
		in.StreamSpecification = &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewImage}
	})
	d, err := c.DescribeTable(ctxT(t), &dynamodb.DescribeTableInput{TableName: aws.String(name)})
	if err != nil {
		t.Fatal(err)
	}
	return aws.ToString(d.Table.LatestStreamArn)
}

// putV writes version v of item pk (sk "" for a table without a sort key).
func putV(t *testing.T, c *dynamodb.Client, table, pk, sk string, v int) {
	t.Helper()
	it := map[string]types.AttributeValue{"pk": s(pk), "v": n(strconv.Itoa(v))}
	if sk != "" {
		it["sk"] = s(sk)
	}
	if _, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table), Item: it}); err != nil {
		t.Fatalf("PutItem %s/%s v%d: %v", pk, sk, v, err)
	}
}

// listShards returns every shard of a stream, DescribeStream page by page
// (Limit per page; 0: the service's default).
func listShards(t *testing.T, sc *dynamodbstreams.Client, arn string, limit int32) []stypes.Shard {
	t.Helper()
	var out []stypes.Shard
	var start *string
	for {
		in := &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: start}
		if limit > 0 {
			in.Limit = aws.Int32(limit)
		}
		d, err := sc.DescribeStream(ctxT(t), in)
		if err != nil {
			t.Fatalf("DescribeStream: %v", err)
		}
		out = append(out, d.StreamDescription.Shards...)
		if start = d.StreamDescription.LastEvaluatedShardId; start == nil {
			return out
		}
	}
}

// shardRec is a record read from a shard: its item, version and shard.
type shardRec struct {
	shard, item, seq string
	v                int
}

// readLineage reads every shard from its trim horizon, a shard only once
// its parent is read to its end (the parent's GetRecords gave no
// NextShardIterator), as a lineage-aware reader does; it fails the test if
// a closed shard never ends or the lineage cannot be followed.
func readLineage(t *testing.T, sc *dynamodbstreams.Client, arn string) ([]shardRec, []stypes.Shard) {
	t.Helper()
	shards := listShards(t, sc, arn, 0)
	listed := map[string]bool{}
	for _, sh := range shards {
		listed[*sh.ShardId] = true
	}
	done := map[string]bool{}
	var recs []shardRec
	for len(done) < len(shards) {
		progressed := false
		for _, sh := range shards {
			id := *sh.ShardId
			if p := aws.ToString(sh.ParentShardId); done[id] || (p != "" && listed[p] && !done[p]) {
				continue
			}
			recs = append(recs, readOne(t, sc, arn, sh)...)
			done[id] = true
			progressed = true
		}
		if !progressed {
			t.Fatalf("the shards' lineage cannot be followed: %v", shards)
		}
	}
	return recs, shards
}

// readOne reads a shard from TRIM_HORIZON: to its end when it is closed
// (no NextShardIterator), or until a page is empty when it is open.
func readOne(t *testing.T, sc *dynamodbstreams.Client, arn string, sh stypes.Shard) []shardRec {
	t.Helper()
	ctx := ctxT(t)
	closed := sh.SequenceNumberRange.EndingSequenceNumber != nil
	gi, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		t.Fatalf("GetShardIterator %s: %v", *sh.ShardId, err)
	}
	var out []shardRec
	iter := gi.ShardIterator
	for i := 0; iter != nil; i++ {
		if i > 10000 {
			t.Fatalf("shard %s never ended", *sh.ShardId)
		}
		gr, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: iter})
		if err != nil {
			t.Fatalf("GetRecords %s: %v", *sh.ShardId, err)
		}
		for _, r := range gr.Records {
			img := r.Dynamodb.NewImage
			item := img["pk"].(*stypes.AttributeValueMemberS).Value
			if sk, ok := img["sk"].(*stypes.AttributeValueMemberS); ok {
				item += "/" + sk.Value
			}
			v, _ := strconv.Atoi(img["v"].(*stypes.AttributeValueMemberN).Value)
			out = append(out, shardRec{shard: *sh.ShardId, item: item, seq: *r.Dynamodb.SequenceNumber, v: v})
		}
		if !closed && len(gr.Records) == 0 {
			break
		}
		iter = gr.NextShardIterator
	}
	return out
}

// checkItemOrder fails the test unless every item's versions arrive in
// write order 1..want[item], each once.
func checkItemOrder(t *testing.T, recs []shardRec, want map[string]int) {
	t.Helper()
	last := map[string]int{}
	for _, r := range recs {
		if r.v != last[r.item]+1 {
			t.Fatalf("item %s: version %d after %d (shard %s)", r.item, r.v, last[r.item], r.shard)
		}
		last[r.item] = r.v
	}
	if fmt.Sprint(last) != fmt.Sprint(want) {
		t.Fatalf("last versions read %v, want %v", last, want)
	}
}

// firstPageRecords returns the records of the first GetRecords page of
// every shard of the stream, from its trim horizon, shard by shard.
func firstPageRecords(t *testing.T, sc *dynamodbstreams.Client, arn string) []stypes.Record {
	t.Helper()
	ctx := context.Background()
	var out []stypes.Record
	for _, sh := range listShards(t, sc, arn, 0) {
		gi, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId, ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			t.Fatal(err)
		}
		gr, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: gi.ShardIterator})
		if err != nil {
			t.Fatal(err)
		}
		out = append(out, gr.Records...)
	}
	return out
}
