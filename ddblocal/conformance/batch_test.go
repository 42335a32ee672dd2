package conformance

import (
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestConformance_Batch_WriteThenGet(t *testing.T) {
	t.Parallel()
	t1, t2 := hashTable(t), rangeTable(t, types.ScalarAttributeTypeN)
	put(t, t1, Item{"pk": s("del"), "v": n("0")})
	var r1, r2 []types.WriteRequest
	for i := 0; i < 12; i++ {
		r1 = append(r1, types.WriteRequest{PutRequest: &types.PutRequest{Item: Item{"pk": s(fmt.Sprint(i)), "v": n(fmt.Sprint(i))}}})
		r2 = append(r2, types.WriteRequest{PutRequest: &types.PutRequest{Item: Item{"pk": s("p"), "sk": n(fmt.Sprint(i))}}})
	}
	r1 = append(r1, types.WriteRequest{DeleteRequest: &types.DeleteRequest{Key: Item{"pk": s("del")}}})
	w, err := ddb(t).BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{t1: r1, t2: r2}})
	noErr(t, err, "BatchWriteItem")
	if len(w.UnprocessedItems) != 0 {
		t.Fatalf("UnprocessedItems = %v, want none", w.UnprocessedItems)
	}
	requireItem(t, nil, get(t, t1, Item{"pk": s("del")}), "deleted by the batch")
	out, err := ddb(t).BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		t1: {Keys: []Item{{"pk": s("3")}, {"pk": s("11")}, {"pk": s("missing")}}, ConsistentRead: aws.Bool(true)},
		t2: {Keys: []Item{{"pk": s("p"), "sk": n("5")}}, ProjectionExpression: aws.String("sk")},
	}})
	noErr(t, err, "BatchGetItem")
	if len(out.UnprocessedKeys) != 0 {
		t.Fatalf("UnprocessedKeys = %v, want none", out.UnprocessedKeys)
	}
	got := keysOf(out.Responses[t1])
	if fmt.Sprint(got) != "[S:11/<nil> S:3/<nil>]" {
		t.Fatalf("BatchGetItem %s returned %v", t1, got)
	}
	requireItems(t, []Item{{"sk": n("5")}}, out.Responses[t2], "BatchGetItem with ProjectionExpression")
}

func TestConformance_Batch_Invalid(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	c := ddb(t)
	var many []types.WriteRequest
	for i := 0; i < 26; i++ {
		many = append(many, types.WriteRequest{PutRequest: &types.PutRequest{Item: Item{"pk": s(fmt.Sprint(i))}}})
	}
	_, err := c.BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: many}})
	requireValidation(t, err, "BatchWriteItem with 26 requests")
	_, err = c.BatchWriteItem(ctx(t), &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{tbl: {
		{PutRequest: &types.PutRequest{Item: Item{"pk": s("x")}}}, {DeleteRequest: &types.DeleteRequest{Key: Item{"pk": s("x")}}}}}})
	requireValidation(t, err, "BatchWriteItem with two requests on one key")
	var keys []Item
	for i := 0; i < 101; i++ {
		keys = append(keys, Item{"pk": s(fmt.Sprint(i))})
	}
	_, err = c.BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{tbl: {Keys: keys}}})
	requireValidation(t, err, "BatchGetItem with 101 keys")
	_, err = c.BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{tbl: {Keys: []Item{{"pk": s("a")}, {"pk": s("a")}}}}})
	requireValidation(t, err, "BatchGetItem with a duplicate key")
	_, err = c.BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{tbl + "_missing": {Keys: []Item{{"pk": s("a")}}}}})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("BatchGetItem on an unknown table: want ResourceNotFoundException, got %v", err)
	}
}

// TestConformance_Batch_GetUnprocessedKeys reads more than 16 MB in one
// BatchGetItem: the service answers part and returns the rest as
// UnprocessedKeys (keeping ConsistentRead), which a follow-up call reads.
func TestConformance_Batch_GetUnprocessedKeys(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skipf("%s skipped in -short mode (writes 17 MB)", t.Name())
	}
	tbl := hashTable(t)
	big := strings.Repeat("x", 390_000)
	var keys []Item
	for i := 0; i < 44; i++ {
		k := Item{"pk": s(fmt.Sprintf("k%02d", i))}
		put(t, tbl, Item{"pk": k["pk"], "blob": s(big)})
		keys = append(keys, k)
	}
	req := map[string]types.KeysAndAttributes{tbl: {Keys: keys, ConsistentRead: aws.Bool(true)}}
	got := map[string]bool{}
	for round := 0; len(req) > 0; round++ {
		out, err := ddb(t).BatchGetItem(ctx(t), &dynamodb.BatchGetItemInput{RequestItems: req})
		noErr(t, err, "BatchGetItem")
		for _, it := range out.Responses[tbl] {
			got[it["pk"].(*types.AttributeValueMemberS).Value] = true
		}
		if round == 0 && len(out.UnprocessedKeys) == 0 {
			t.Fatalf("17 MB BatchGetItem answered whole; want UnprocessedKeys past 16 MB")
		}
		if u, ok := out.UnprocessedKeys[tbl]; ok && !aws.ToBool(u.ConsistentRead) {
			t.Fatalf("UnprocessedKeys lost ConsistentRead: %+v", u)
		}
		req = out.UnprocessedKeys
		if round > 50 {
			t.Fatal("UnprocessedKeys never drained")
		}
	}
	if len(got) != 44 {
		t.Fatalf("read %d distinct items, want 44", len(got))
	}
}
