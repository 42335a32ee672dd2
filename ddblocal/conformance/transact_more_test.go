package conformance

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	st "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"
)

// TestConformance_Transact_ItemTooLargeCancels: the TransactionCanceledException
// reference lists "an item size becomes too large (larger than 400 KB) ...
// because of changes made by the transaction" as a cancellation; its reason
// code is ValidationError and the other items' None.
func TestConformance_Transact_ItemTooLargeCancels(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("big"), "blob": s(strings.Repeat("x", 400_000))})
	_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tbl), Item: Item{"pk": s("other")}}},
		{Update: &types.Update{TableName: aws.String(tbl), Key: Item{"pk": s("big")}, UpdateExpression: aws.String("SET more = :v"),
			ExpressionAttributeValues: Item{":v": s(strings.Repeat("y", 10_000))}}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("want TransactionCanceledException, got %v", err)
	}
	var codes []string
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	if fmt.Sprint(codes) != "[None ValidationError]" {
		t.Fatalf("CancellationReasons = %v, want [None ValidationError]", codes)
	}
	requireItem(t, nil, get(t, tbl, Item{"pk": s("other")}), "canceled transaction wrote nothing")
}

// TestConformance_Transact_UnknownTable: TransactGetItems on a missing table
// is a ResourceNotFoundException.
func TestConformance_Transact_UnknownTable(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	_, err := ddb(t).TransactGetItems(ctx(t), &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: aws.String(tableName(t) + "_missing"), Key: Item{"pk": s("a")}}}}})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("want ResourceNotFoundException, got %v", err)
	}
}

// TestConformance_Streams_DeletedTable: deleting a table puts its stream in
// DISABLED state; its records stay readable (Developer Guide, DynamoDB
// Streams: the stream is deleted automatically after 24 hours).
func TestConformance_Streams_DeletedTable(t *testing.T) {
	t.Parallel()
	requireStreams(t)
	name, arn := streamTable(t, types.StreamViewTypeKeysOnly)
	put(t, name, Item{"pk": s("a")})
	_, err := ddb(t).DeleteTable(ctx(t), &dynamodb.DeleteTableInput{TableName: aws.String(name)})
	noErr(t, err, "DeleteTable")
	waitGone(t, name)
	d, _ := shardsOf(t, streams(t), arn)
	if d.StreamStatus != st.StreamStatusDisabled && d.StreamStatus != st.StreamStatusDisabling {
		t.Fatalf("stream of a deleted table: status %s, want DISABLED", d.StreamStatus)
	}
	if got := fmt.Sprint(recordSummary(readStream(t, arn))); got != "[INSERT S:a]" {
		t.Fatalf("records of a deleted table's stream = %s, want [INSERT S:a]", got)
	}
}
