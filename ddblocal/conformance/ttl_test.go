package conformance

import (
	"fmt"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
)

// TestConformance_TimeToLive_ExpiredUntilSwept: expired items stay readable
// until TTL deletes them (UpdateTimeToLive reference: "Items that have
// expired and not been deleted will still show up in reads, queries, and
// scans"); deletion removes them from indexes too.
func TestConformance_TimeToLive_ExpiredUntilSwept(t *testing.T) {
	t.Parallel()
	requireOps(t, "UpdateTimeToLive")
	requireLocal(t, "SweepTTL")
	tbl := indexedTable(t)
	_, err := ddb(t).UpdateTimeToLive(ctx(t), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(tbl),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}})
	noErr(t, err, "UpdateTimeToLive")
	past := fmt.Sprint(time.Now().Add(-time.Minute).Unix())
	put(t, tbl, Item{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("1"), "exp": n(past)})
	if get(t, tbl, Item{"pk": s("a"), "sk": s("1")}) == nil {
		t.Fatalf("an expired item must stay readable until it is deleted")
	}
	noErr(t, tgt.local.SweepTTL(ctx(t)), "SweepTTL")
	requireItem(t, nil, get(t, tbl, Item{"pk": s("a"), "sk": s("1")}), "after SweepTTL")
	if got := gsiKeys(t, tbl, "gsi_all", "gpk = :g", Item{":g": s("g")}, 0, true); len(got) != 0 {
		t.Fatalf("GSI still lists the expired item: %v", got)
	}
}

func TestConformance_TimeToLive_Disable(t *testing.T) {
	t.Parallel()
	requireOps(t, "UpdateTimeToLive")
	tbl := hashTable(t)
	c := ddb(t)
	_, err := c.UpdateTimeToLive(ctx(t), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(tbl),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(false)}})
	requireValidation(t, err, "disabling TTL that is not enabled")
	_, err = c.UpdateTimeToLive(ctx(t), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(tbl + "_missing"),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}})
	requireCode(t, err, "ResourceNotFoundException", "UpdateTimeToLive of an unknown table")
}

func TestConformance_Streams_CompositeKeysAndLimits(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	ks, ad := keySchema(types.ScalarAttributeTypeN)
	name := createTable(t, &dynamodb.CreateTableInput{KeySchema: ks, AttributeDefinitions: ad,
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	arn := aws.ToString(waitActive(t, name).LatestStreamArn)
	put(t, name, Item{"pk": s("a"), "sk": n("1"), "v": s("x")})
	recs := readStream(t, arn)
	if len(recs) != 1 {
		t.Fatalf("want 1 record, got %d", len(recs))
	}
	requireItem(t, Item{"pk": s("a"), "sk": n("1")}, fromStream(recs[0].Dynamodb.Keys), "Keys hold hash and range key")
	if recs[0].Dynamodb.NewImage != nil || recs[0].Dynamodb.OldImage != nil {
		t.Fatalf("KEYS_ONLY record carries images")
	}
	sc := streams(t)
	_, shards := shardsOf(t, sc, arn)
	it, err := sc.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: shards[0].ShardId, ShardIteratorType: "TRIM_HORIZON"})
	noErr(t, err, "GetShardIterator")
	// GetRecords reference: Limit has a valid range of 1 to 1000.
	_, err = sc.GetRecords(ctx(t), &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator, Limit: aws.Int32(1001)})
	requireValidation(t, err, "GetRecords Limit 1001 (maximum 1000)")
}
