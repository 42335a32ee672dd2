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

func TestConformance_Streams_ListStreamsPaging(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	mine := map[string]bool{}
	for i := 0; i < 3; i++ {
		_, arn := streamTable(t, types.StreamViewTypeKeysOnly)
		mine[arn] = true
	}
	seen := map[string]bool{}
	var start *string
	for page := 0; ; page++ {
		out, err := streams(t).ListStreams(ctx(t), &dynamodbstreams.ListStreamsInput{Limit: aws.Int32(2), ExclusiveStartStreamArn: start})
		noErr(t, err, "ListStreams")
		if len(out.Streams) > 2 {
			t.Fatalf("ListStreams Limit 2 returned %d", len(out.Streams))
		}
		for _, s := range out.Streams {
			seen[aws.ToString(s.StreamArn)] = true
		}
		if out.LastEvaluatedStreamArn == nil {
			break
		}
		start = out.LastEvaluatedStreamArn
		if page > 10000 {
			t.Fatal("ListStreams paging never ended")
		}
	}
	for arn := range mine {
		if !seen[arn] {
			t.Errorf("stream %s missing from ListStreams pages", arn)
		}
	}
}

func TestConformance_Streams_DisableReenable(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name, arn := streamTable(t, types.StreamViewTypeNewImage)
	put(t, name, Item{"pk": s("a")})
	c := ddb(t)
	_, err := c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name), StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}})
	noErr(t, err, "disable stream")
	waitActive(t, name)
	put(t, name, Item{"pk": s("b")}) // not recorded: the stream is off
	d, _ := shardsOf(t, streams(t), arn)
	if d.StreamStatus != st.StreamStatusDisabled && d.StreamStatus != st.StreamStatusDisabling {
		t.Fatalf("disabled stream status = %s, want DISABLED or DISABLING", d.StreamStatus)
	}
	if got := fmt.Sprint(recordSummary(readStream(t, arn))); got != "[INSERT S:a]" {
		t.Fatalf("a disabled stream stays readable with its records: got %s, want [INSERT S:a]", got)
	}
	_, err = c.UpdateTable(ctx(t), &dynamodb.UpdateTableInput{TableName: aws.String(name),
		StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeKeysOnly}})
	noErr(t, err, "re-enable stream")
	td := waitActive(t, name)
	arn2 := aws.ToString(td.LatestStreamArn)
	if arn2 == "" || arn2 == arn {
		t.Fatalf("re-enabling gives a new stream: LatestStreamArn %q (old %q)", arn2, arn)
	}
	put(t, name, Item{"pk": s("c")})
	if got := fmt.Sprint(recordSummary(readStream(t, arn2))); got != "[INSERT S:c]" {
		t.Fatalf("new stream records = %s, want [INSERT S:c]", got)
	}
}

func TestConformance_Streams_BatchAndUpsertRecords(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name, arn := streamTable(t, types.StreamViewTypeNewAndOldImages)
	_, err := ddb(t).BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{name: {
		{PutRequest: &types.PutRequest{Item: Item{"pk": s("a")}}}, {PutRequest: &types.PutRequest{Item: Item{"pk": s("b")}}}}}})
	noErr(t, err, "BatchWriteItem")
	_, err = ddb(t).UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(name), Key: Item{"pk": s("c")},
		UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: Item{":v": n("1")}})
	noErr(t, err, "UpdateItem creating an item")
	recs := readStream(t, arn)
	got := map[string]bool{}
	for _, x := range recordSummary(recs) {
		got[x] = true
	}
	if len(recs) != 3 || !got["INSERT S:a"] || !got["INSERT S:b"] || !got["INSERT S:c"] {
		t.Fatalf("records = %v, want INSERT for each batch put and for the upsert", recordSummary(recs))
	}
}
