package conformance

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// streamTable creates a table keyed by pk (S) with a stream of the given
// view type and returns its name and LatestStreamArn.
func streamTable(t testing.TB, vt types.StreamViewType) (string, string) {
	t.Helper()
	ks, ad := keySchema("")
	name := createTable(t, &dynamodb.CreateTableInput{KeySchema: ks, AttributeDefinitions: ad,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: vt}})
	d := waitActive(t, name)
	if d.LatestStreamArn == nil {
		t.Fatalf("table %s has no LatestStreamArn", name)
	}
	return name, *d.LatestStreamArn
}

// fromStream converts a Streams attribute map to a DynamoDB one.
func fromStream(in map[string]st.AttributeValue) Item {
	if in == nil {
		return nil
	}
	out := make(Item, len(in))
	for k, v := range in {
		out[k] = fromStreamValue(v)
	}
	return out
}

func fromStreamValue(v st.AttributeValue) types.AttributeValue {
	switch v := v.(type) {
	case *st.AttributeValueMemberS:
		return s(v.Value)
	case *st.AttributeValueMemberN:
		return n(v.Value)
	case *st.AttributeValueMemberB:
		return b(v.Value)
	case *st.AttributeValueMemberBOOL:
		return bl(v.Value)
	case *st.AttributeValueMemberNULL:
		return null()
	case *st.AttributeValueMemberSS:
		return ss(v.Value...)
	case *st.AttributeValueMemberNS:
		return ns(v.Value...)
	case *st.AttributeValueMemberBS:
		return bs(v.Value...)
	case *st.AttributeValueMemberL:
		out := make([]types.AttributeValue, len(v.Value))
		for i, x := range v.Value {
			out[i] = fromStreamValue(x)
		}
		return l(out...)
	case *st.AttributeValueMemberM:
		return m(fromStream(v.Value))
	}
	return nil
}

// shardsOf describes the stream, following LastEvaluatedShardId.
func shardsOf(t testing.TB, c *dynamodbstreams.Client, arn string) (*st.StreamDescription, []st.Shard) {
	t.Helper()
	var all []st.Shard
	var start *string
	for {
		out, err := c.DescribeStream(ctx(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn), ExclusiveStartShardId: start})
		noErr(t, err, "DescribeStream")
		all = append(all, out.StreamDescription.Shards...)
		if out.StreamDescription.LastEvaluatedShardId == nil {
			return out.StreamDescription, all
		}
		start = out.StreamDescription.LastEvaluatedShardId
	}
}

// readShard reads a shard from the iterator until it ends or answers no
// more records; it returns the records and the last NextShardIterator.
func readShard(t testing.TB, c *dynamodbstreams.Client, iter *string, limit int32) ([]st.Record, *string) {
	t.Helper()
	var recs []st.Record
	for i := 0; iter != nil && i < 1000; i++ {
		in := &dynamodbstreams.GetRecordsInput{ShardIterator: iter}
		if limit > 0 {
			in.Limit = aws.Int32(limit)
		}
		out, err := c.GetRecords(ctx(t), in)
		noErr(t, err, "GetRecords")
		if limit > 0 && len(out.Records) > int(limit) {
			t.Fatalf("GetRecords Limit %d returned %d records", limit, len(out.Records))
		}
		recs = append(recs, out.Records...)
		if len(out.Records) == 0 {
			return recs, out.NextShardIterator
		}
		iter = out.NextShardIterator
	}
	return recs, iter
}

// readStream reads every record of the stream from TRIM_HORIZON, parents
// before children.
func readStream(t testing.TB, arn string) []st.Record {
	t.Helper()
	recs, _ := readStreamWith(t, streams(t), arn)
	return recs
}

// readStreamWith is readStream through c; it also returns the shard each
// record was read from, by position.
func readStreamWith(t testing.TB, c *dynamodbstreams.Client, arn string) ([]st.Record, []string) {
	t.Helper()
	_, shards := shardsOf(t, c, arn)
	var from []string
	done := map[string]bool{}
	var recs []st.Record
	for len(done) < len(shards) {
		progressed := false
		for _, sh := range shards {
			id := aws.ToString(sh.ShardId)
			known := false
			for _, p := range shards {
				known = known || aws.ToString(p.ShardId) == aws.ToString(sh.ParentShardId)
			}
			if done[id] || (sh.ParentShardId != nil && known && !done[aws.ToString(sh.ParentShardId)]) {
				continue
			}
			it, err := c.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId,
				ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
			noErr(t, err, "GetShardIterator TRIM_HORIZON")
			r, next := readShard(t, c, it.ShardIterator, 0)
			if sh.SequenceNumberRange.EndingSequenceNumber != nil && next != nil {
				t.Fatalf("closed shard %s read to its last record still answers a NextShardIterator", id)
			}
			recs = append(recs, r...)
			for range r {
				from = append(from, id)
			}
			done[id] = true
			progressed = true
		}
		if !progressed {
			t.Fatalf("shard lineage has a cycle: %+v", shards)
		}
	}
	return recs, from
}

// recordSummary renders records as "EVENT key" strings.
func recordSummary(recs []st.Record) []string {
	out := make([]string, len(recs))
	for i, r := range recs {
		out[i] = fmt.Sprintf("%s %v", r.EventName, plain(fromStreamValue(r.Dynamodb.Keys["pk"])))
	}
	return out
}

// shardHolding returns the id of the one shard of the stream that holds
// records (the test wrote a single item, whose records stay in one shard).
func shardHolding(t testing.TB, arn string) *string {
	t.Helper()
	c := streams(t)
	_, shards := shardsOf(t, c, arn)
	var found *string
	for _, sh := range shards {
		it, err := c.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh.ShardId,
			ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
		noErr(t, err, "GetShardIterator TRIM_HORIZON")
		if recs, _ := readShard(t, c, it.ShardIterator, 0); len(recs) > 0 {
			if found != nil {
				t.Fatalf("the records of one item are in shards %s and %s", *found, *sh.ShardId)
			}
			found = sh.ShardId
		}
	}
	if found == nil {
		t.Fatalf("no shard of %s holds a record", arn)
	}
	return found
}

// versions renders records as the list of their NewImage's v attributes.
func versions(recs []st.Record) string {
	out := make([]string, len(recs))
	for i, r := range recs {
		if v, ok := r.Dynamodb.NewImage["v"].(*st.AttributeValueMemberN); ok {
			out[i] = v.Value
		}
	}
	return fmt.Sprint(out)
}
