package conformance

import (
	"errors"
	"fmt"
	"math/big"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

func TestConformance_Streams_ListAndDescribe(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name, arn := streamTable(t, types.StreamViewTypeNewAndOldImages)
	c := streams(t)
	ls, err := c.ListStreams(ctx(t), &dynamodbstreams.ListStreamsInput{TableName: aws.String(name)})
	noErr(t, err, "ListStreams")
	if len(ls.Streams) != 1 || aws.ToString(ls.Streams[0].StreamArn) != arn || aws.ToString(ls.Streams[0].TableName) != name ||
		aws.ToString(ls.Streams[0].StreamLabel) == "" {
		t.Fatalf("ListStreams(TableName=%s) = %+v, want exactly the stream %s", name, ls.Streams, arn)
	}
	d, shards := shardsOf(t, c, arn)
	if d.StreamStatus != st.StreamStatusEnabled || d.StreamViewType != st.StreamViewTypeNewAndOldImages || aws.ToString(d.TableName) != name ||
		aws.ToString(d.StreamArn) != arn || len(d.KeySchema) != 1 || aws.ToString(d.KeySchema[0].AttributeName) != "pk" {
		t.Fatalf("DescribeStream = %+v", d)
	}
	if len(shards) == 0 || shards[0].ShardId == nil || shards[0].SequenceNumberRange == nil || shards[0].SequenceNumberRange.StartingSequenceNumber == nil {
		put(t, name, Item{"pk": s("a")})
		_, shards = shardsOf(t, c, arn)
	}
	if len(shards) == 0 || shards[0].SequenceNumberRange == nil || shards[0].SequenceNumberRange.StartingSequenceNumber == nil {
		t.Fatalf("DescribeStream shards = %+v, want a shard with a StartingSequenceNumber", shards)
	}
	_, err = c.DescribeStream(ctx(t), &dynamodbstreams.DescribeStreamInput{StreamArn: aws.String(arn + "x")})
	var rnf *st.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("DescribeStream of an unknown stream: want ResourceNotFoundException, got %v", err)
	}
}

func TestConformance_Streams_ViewTypes(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	v1 := Item{"pk": s("a"), "v": n("1")}
	v2 := Item{"pk": s("a"), "v": n("2"), "w": s("x")}
	key := Item{"pk": s("a")}
	for _, vt := range []types.StreamViewType{types.StreamViewTypeKeysOnly, types.StreamViewTypeNewImage, types.StreamViewTypeOldImage, types.StreamViewTypeNewAndOldImages} {
		t.Run(string(vt), func(t *testing.T) {
			t.Parallel()
			name, arn := streamTable(t, vt)
			put(t, name, v1)
			_, err := ddb(t).UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: key,
				UpdateExpression: aws.String("SET v = :v, w = :w"), ExpressionAttributeValues: Item{":v": n("2"), ":w": s("x")}})
			noErr(t, err, "UpdateItem")
			_, err = ddb(t).DeleteItem(ctx(t), &dynamodb.DeleteItemInput{TableName: aws.String(name), Key: key})
			noErr(t, err, "DeleteItem")
			recs := readStream(t, arn)
			if got := fmt.Sprint(recordSummary(recs)); got != "[INSERT S:a MODIFY S:a REMOVE S:a]" {
				t.Fatalf("records = %s, want INSERT, MODIFY, REMOVE", got)
			}
			newImg := vt == types.StreamViewTypeNewImage || vt == types.StreamViewTypeNewAndOldImages
			oldImg := vt == types.StreamViewTypeOldImage || vt == types.StreamViewTypeNewAndOldImages
			want := []struct{ old, new Item }{{nil, v1}, {v1, v2}, {v2, nil}}
			var prev *big.Int
			for i, r := range recs {
				d := r.Dynamodb
				if aws.ToString(r.EventSource) != "aws:dynamodb" || aws.ToString(r.EventVersion) == "" || aws.ToString(r.AwsRegion) == "" || aws.ToString(r.EventID) == "" {
					t.Errorf("record %d envelope: source %q version %q region %q id %q", i, aws.ToString(r.EventSource), aws.ToString(r.EventVersion), aws.ToString(r.AwsRegion), aws.ToString(r.EventID))
				}
				if d.StreamViewType != st.StreamViewType(vt) || aws.ToInt64(d.SizeBytes) <= 0 || d.ApproximateCreationDateTime == nil {
					t.Errorf("record %d: StreamViewType %s SizeBytes %d ApproximateCreationDateTime %v", i, d.StreamViewType, aws.ToInt64(d.SizeBytes), d.ApproximateCreationDateTime)
				}
				if r.UserIdentity != nil {
					t.Errorf("record %d of a user write has UserIdentity %+v", i, r.UserIdentity)
				}
				requireItem(t, key, fromStream(d.Keys), "record ", i, " Keys")
				wantNew, wantOld := Item(nil), Item(nil)
				if newImg {
					wantNew = want[i].new
				}
				if oldImg {
					wantOld = want[i].old
				}
				requireItem(t, wantNew, fromStream(d.NewImage), "record ", i, " NewImage")
				requireItem(t, wantOld, fromStream(d.OldImage), "record ", i, " OldImage")
				seq, ok := new(big.Int).SetString(aws.ToString(d.SequenceNumber), 10)
				if !ok || (prev != nil && seq.Cmp(prev) <= 0) {
					t.Errorf("record %d SequenceNumber %q not a number above the previous one", i, aws.ToString(d.SequenceNumber))
				}
				prev = seq
			}
		})
	}
}

func TestConformance_Streams_NoChangeNoRecord(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name, arn := streamTable(t, types.StreamViewTypeNewAndOldImages)
	c := ddb(t)
	it := Item{"pk": s("a"), "v": n("1"), "s": ss("x", "y")}
	put(t, name, it)
	put(t, name, Item{"pk": s("a"), "v": n("1.0"), "s": ss("y", "x")}) // same item again
	_, err := c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: Item{"pk": s("a")},
		UpdateExpression: aws.String("SET v = :v REMOVE nothere"), ExpressionAttributeValues: Item{":v": n("1")}})
	noErr(t, err, "no-op UpdateItem")
	_, err = c.DeleteItem(ctx(t), &dynamodb.DeleteItemInput{TableName: aws.String(name), Key: Item{"pk": s("missing")}})
	noErr(t, err, "DeleteItem of a missing item")
	_, err = c.PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(name), Item: Item{"pk": s("a"), "v": n("9")},
		ConditionExpression: aws.String("attribute_not_exists(pk)")})
	requireCCF(t, err, "failed conditional put")
	if got := fmt.Sprint(recordSummary(readStream(t, arn))); got != "[INSERT S:a]" {
		t.Fatalf("records = %s, want only the first INSERT (writes that change nothing make no record)", got)
	}
}

func TestConformance_Streams_PerItemOrder(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name, arn := streamTable(t, types.StreamViewTypeNewImage)
	for i := 1; i <= 10; i++ {
		for _, k := range []string{"a", "b", "c"} {
			put(t, name, Item{"pk": s(k), "ver": n(fmt.Sprint(i))})
		}
	}
	last := map[string]int{}
	for _, r := range readStream(t, arn) {
		img := fromStream(r.Dynamodb.NewImage)
		k := img["pk"].(*types.AttributeValueMemberS).Value
		var ver int
		fmt.Sscan(img["ver"].(*types.AttributeValueMemberN).Value, &ver)
		if ver != last[k]+1 {
			t.Fatalf("item %s: version %d after %d; records of one item must keep write order", k, ver, last[k])
		}
		last[k] = ver
	}
	if fmt.Sprint(last) != "map[a:10 b:10 c:10]" {
		t.Fatalf("last versions %v, want 10 each", last)
	}
}

func TestConformance_Streams_TransactionItemsSeparateRecords(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	requireTxOps(t)
	name, arn := streamTable(t, types.StreamViewTypeNewAndOldImages)
	put(t, name, Item{"pk": s("b"), "v": n("1")}, Item{"pk": s("c")})
	_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(name), Item: Item{"pk": s("a")}}},
		{Update: &types.Update{TableName: aws.String(name), Key: Item{"pk": s("b")}, UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: Item{":v": n("2")}}},
		{Delete: &types.Delete{TableName: aws.String(name), Key: Item{"pk": s("c")}}},
	}})
	noErr(t, err, "TransactWriteItems")
	// The items may lie in different shards: compare each item's records.
	recs := readStream(t, arn)
	perItem := map[string][]string{}
	for i, r := range recs {
		k := fmt.Sprint(plain(fromStreamValue(r.Dynamodb.Keys["pk"])))
		perItem[k] = append(perItem[k], string(recs[i].EventName))
	}
	if got := fmt.Sprint(perItem); len(recs) != 5 || got != "map[S:a:[INSERT] S:b:[INSERT MODIFY] S:c:[INSERT REMOVE]]" {
		t.Fatalf("records = %v (per item %s), want one per item of the transaction after the puts: INSERT a, MODIFY b, REMOVE c", recordSummary(recs), got)
	}
}

func TestConformance_Streams_IteratorTypes(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	// One item: its records lie in one shard, whatever the stream's shards.
	name, arn := streamTable(t, types.StreamViewTypeNewImage)
	for i := 0; i < 4; i++ {
		put(t, name, Item{"pk": s("k"), "v": n(fmt.Sprint(i))})
	}
	c := streams(t)
	sh := shardHolding(t, arn)
	iter := func(typ st.ShardIteratorType, seq *string) *string {
		out, err := c.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh, ShardIteratorType: typ, SequenceNumber: seq})
		noErr(t, err, "GetShardIterator "+string(typ))
		return out.ShardIterator
	}
	all, _ := readShard(t, c, iter(st.ShardIteratorTypeTrimHorizon, nil), 1)
	if got := versions(all); got != "[0 1 2 3]" {
		t.Fatalf("TRIM_HORIZON with Limit 1 = %s", got)
	}
	at, _ := readShard(t, c, iter(st.ShardIteratorTypeAtSequenceNumber, all[1].Dynamodb.SequenceNumber), 0)
	if got := versions(at); got != "[1 2 3]" {
		t.Fatalf("AT_SEQUENCE_NUMBER of record 1 = %s", got)
	}
	after, _ := readShard(t, c, iter(st.ShardIteratorTypeAfterSequenceNumber, all[1].Dynamodb.SequenceNumber), 0)
	if got := versions(after); got != "[2 3]" {
		t.Fatalf("AFTER_SEQUENCE_NUMBER of record 1 = %s", got)
	}
	latest := iter(st.ShardIteratorTypeLatest, nil)
	put(t, name, Item{"pk": s("k"), "v": n("4")})
	recs, next := readShard(t, c, latest, 0)
	if got := versions(recs); got != "[4]" {
		t.Fatalf("LATEST = %s, want only the record written after the iterator", got)
	}
	if next == nil {
		t.Fatalf("an open shard must answer a NextShardIterator")
	}
	_, err := c.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: sh, ShardIteratorType: st.ShardIteratorTypeAtSequenceNumber})
	requireValidation(t, err, "AT_SEQUENCE_NUMBER without a SequenceNumber")
	_, err = c.GetShardIterator(ctx(t), &dynamodbstreams.GetShardIteratorInput{StreamArn: aws.String(arn), ShardId: aws.String("shardId-00000000000000000000-00000000"), ShardIteratorType: st.ShardIteratorTypeTrimHorizon})
	var rnf *st.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("GetShardIterator of an unknown shard: want ResourceNotFoundException, got %v", err)
	}
}

func TestConformance_Streams_TTLDeletionRecord(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	requireOps(t, "UpdateTimeToLive")
	requireLocal(t, "SweepTTL")
	name, arn := streamTable(t, types.StreamViewTypeNewAndOldImages)
	_, err := ddb(t).UpdateTimeToLive(ctx(t), &dynamodb.UpdateTimeToLiveInput{TableName: aws.String(name),
		TimeToLiveSpecification: &types.TimeToLiveSpecification{AttributeName: aws.String("exp"), Enabled: aws.Bool(true)}})
	noErr(t, err, "UpdateTimeToLive")
	// An epoch an hour ago has expired; a non-Number TTL attribute never expires.
	past := fmt.Sprint(time.Now().Add(-time.Hour).Unix())
	put(t, name, Item{"pk": s("old"), "exp": n(past)}, Item{"pk": s("future"), "exp": n(fmt.Sprint(time.Now().Add(time.Hour).Unix()))},
		Item{"pk": s("notnum"), "exp": s(past)}, Item{"pk": s("user")})
	_, err = ddb(t).DeleteItem(ctx(t), &dynamodb.DeleteItemInput{TableName: aws.String(name), Key: Item{"pk": s("user")}})
	noErr(t, err, "DeleteItem")
	noErr(t, tgt.local.SweepTTL(ctx(t)), "SweepTTL")
	requireItem(t, nil, get(t, name, Item{"pk": s("old")}), "expired item swept")
	for _, k := range []string{"future", "notnum"} {
		if get(t, name, Item{"pk": s(k)}) == nil {
			t.Fatalf("item %s was swept; items not yet expired, or with a non-Number TTL attribute, must stay", k)
		}
	}
	var removes []st.Record
	for _, r := range readStream(t, arn) {
		if r.EventName == st.OperationTypeRemove {
			removes = append(removes, r)
		}
	}
	if got := fmt.Sprint(recordSummary(removes)); got != "[REMOVE S:user REMOVE S:old]" {
		t.Fatalf("REMOVE records = %s, want the user delete then the TTL delete", got)
	}
	if removes[0].UserIdentity != nil {
		t.Fatalf("user delete has UserIdentity %+v", removes[0].UserIdentity)
	}
	id := removes[1].UserIdentity
	if id == nil || aws.ToString(id.Type) != "Service" || aws.ToString(id.PrincipalId) != "dynamodb.amazonaws.com" {
		t.Fatalf("TTL delete UserIdentity = %+v, want {Type: Service, PrincipalId: dynamodb.amazonaws.com}", id)
	}
	requireItem(t, Item{"pk": s("old"), "exp": n(past)}, fromStream(removes[1].Dynamodb.OldImage), "TTL REMOVE OldImage")
}
