package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_Paging_OneMegabyte: one Query or Scan reads at most 1 MB
// of items before it stops with a LastEvaluatedKey (Query/Scan reference).
func TestConformance_Paging_OneMegabyte(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skipf("%s skipped in -short mode (writes 3 MB)", t.Name())
	}
	tbl := rangeTable(t, types.ScalarAttributeTypeN)
	blob := strings.Repeat("x", 100_000)
	for i := 0; i < 30; i++ {
		put(t, tbl, Item{"pk": s("p"), "sk": n(fmt.Sprint(i)), "blob": s(blob)})
	}
	out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: Item{":p": s("p")}})
	if len(out.Items) == 0 || len(out.Items) > 11 || len(out.LastEvaluatedKey) == 0 {
		t.Fatalf("Query of 3 MB returned %d items (LastEvaluatedKey %v); want at most ~1 MB (<= 11 items of 100 KB) and a LastEvaluatedKey",
			len(out.Items), plainItem(out.LastEvaluatedKey))
	}
	// Select COUNT is bounded the same way: it counts what 1 MB of reading holds.
	cnt := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: Item{":p": s("p")},
		Select: types.SelectCount})
	if cnt.Count == 30 || len(cnt.LastEvaluatedKey) == 0 {
		t.Fatalf("Select COUNT over 3 MB: Count %d, LastEvaluatedKey %v; want a partial count and a LastEvaluatedKey", cnt.Count, plainItem(cnt.LastEvaluatedKey))
	}
	items, pages := scanAll(t, dynamodb.ScanInput{TableName: aws.String(tbl)})
	if len(items) != 30 || pages < 3 {
		t.Fatalf("Scan of 3 MB: %d items in %d pages; want all 30 in at least 3 pages", len(items), pages)
	}
}

// TestConformance_Batch_ItemTooLarge: BatchWriteItem rejects an item over
// 400 KB as a ValidationException.
func TestConformance_Batch_ItemTooLarge(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	_, err := ddb(t).BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
		{PutRequest: &types.PutRequest{Item: Item{"pk": s("ok")}}},
		{PutRequest: &types.PutRequest{Item: Item{"pk": s("big"), "blob": s(strings.Repeat("x", 409_600))}}}}}})
	requireValidation(t, err, "BatchWriteItem with an item over 400 KB")
	requireItem(t, nil, get(t, tbl, Item{"pk": s("ok")}), "a rejected batch writes nothing")
}
