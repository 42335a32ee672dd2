package conformance

import (
	"errors"
	"fmt"
	"os"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func requireTxOps(t testing.TB) {
	t.Helper()
	requireOps(t, "TransactWriteItems", "TransactGetItems")
}

func TestConformance_Transact_WriteAllKinds(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	t1, t2 := hashTable(t), rangeTable(t, types.ScalarAttributeTypeN)
	put(t, t1, Item{"pk": s("upd"), "n": n("1")}, Item{"pk": s("del")}, Item{"pk": s("chk"), "ok": bl(true)})
	_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(t2), Item: Item{"pk": s("new"), "sk": n("1"), "v": s("x")}, ConditionExpression: aws.String("attribute_not_exists(pk)")}},
		{Update: &types.Update{TableName: aws.String(t1), Key: Item{"pk": s("upd")}, UpdateExpression: aws.String("SET n = n + :one"), ExpressionAttributeValues: Item{":one": n("1")}}},
		{Delete: &types.Delete{TableName: aws.String(t1), Key: Item{"pk": s("del")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(t1), Key: Item{"pk": s("chk")}, ConditionExpression: aws.String("ok = :t"), ExpressionAttributeValues: Item{":t": bl(true)}}},
	}})
	noErr(t, err, "TransactWriteItems")
	requireItem(t, Item{"pk": s("new"), "sk": n("1"), "v": s("x")}, get(t, t2, Item{"pk": s("new"), "sk": n("1")}), "Put")
	requireItem(t, Item{"pk": s("upd"), "n": n("2")}, get(t, t1, Item{"pk": s("upd")}), "Update")
	requireItem(t, nil, get(t, t1, Item{"pk": s("del")}), "Delete")
	requireItem(t, Item{"pk": s("chk"), "ok": bl(true)}, get(t, t1, Item{"pk": s("chk")}), "ConditionCheck leaves the item")
}

func TestConformance_Transact_CanceledAllOrNothing(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "n": n("1")}, Item{"pk": s("c"), "v": s("old")}, Item{"pk": s("d")})
	_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Update: &types.Update{TableName: aws.String(tbl), Key: Item{"pk": s("a")}, UpdateExpression: aws.String("SET n = :two"), ExpressionAttributeValues: Item{":two": n("2")}}},
		{Put: &types.Put{TableName: aws.String(tbl), Item: Item{"pk": s("b")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(tbl), Key: Item{"pk": s("c")}, ConditionExpression: aws.String("v = :new"),
			ExpressionAttributeValues: Item{":new": s("new")}, ReturnValuesOnConditionCheckFailure: types.ReturnValuesOnConditionCheckFailureAllOld}},
		{Delete: &types.Delete{TableName: aws.String(tbl), Key: Item{"pk": s("d")}}},
	}})
	var tce *types.TransactionCanceledException
	if !errors.As(err, &tce) {
		t.Fatalf("want TransactionCanceledException, got %v", err)
	}
	var codes []string
	for _, r := range tce.CancellationReasons {
		codes = append(codes, aws.ToString(r.Code))
	}
	if fmt.Sprint(codes) != "[None None ConditionalCheckFailed None]" {
		t.Fatalf("CancellationReasons codes = %v, want one per item in order: [None None ConditionalCheckFailed None]", codes)
	}
	requireItem(t, Item{"pk": s("c"), "v": s("old")}, tce.CancellationReasons[2].Item, "ALL_OLD item in the failing reason")
	requireItem(t, Item{"pk": s("a"), "n": n("1")}, get(t, tbl, Item{"pk": s("a")}), "update rolled back")
	requireItem(t, nil, get(t, tbl, Item{"pk": s("b")}), "put rolled back")
	requireItem(t, Item{"pk": s("d")}, get(t, tbl, Item{"pk": s("d")}), "delete rolled back")
}

func TestConformance_Transact_ClientRequestTokenIdempotent(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	tbl := hashTable(t)
	token := fmt.Sprintf("tok-%d-%d", os.Getpid(), tableSeq.Add(1)) // at most 36 characters
	in := func(by string) *dynamodb.TransactWriteItemsInput {
		return &dynamodb.TransactWriteItemsInput{ClientRequestToken: aws.String(token), TransactItems: []types.TransactWriteItem{
			{Update: &types.Update{TableName: aws.String(tbl), Key: Item{"pk": s("ctr")}, UpdateExpression: aws.String("ADD n :d"), ExpressionAttributeValues: Item{":d": n(by)}}},
		}}
	}
	_, err := ddb(t).TransactWriteItems(ctx(t), in("1"))
	noErr(t, err, "first TransactWriteItems")
	_, err = ddb(t).TransactWriteItems(ctx(t), in("1"))
	noErr(t, err, "same request and token again")
	requireItem(t, Item{"pk": s("ctr"), "n": n("1")}, get(t, tbl, Item{"pk": s("ctr")}), "a repeated token applies the writes once")
	_, err = ddb(t).TransactWriteItems(ctx(t), in("5"))
	var ipm *types.IdempotentParameterMismatchException
	if !errors.As(err, &ipm) {
		t.Fatalf("same token, different request: want IdempotentParameterMismatchException, got %v", err)
	}
}

func TestConformance_Transact_Invalid(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	tbl := hashTable(t)
	var many []types.TransactWriteItem
	for i := 0; i < 101; i++ {
		many = append(many, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tbl), Item: Item{"pk": s(fmt.Sprint(i))}}})
	}
	_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: many})
	requireValidation(t, err, "101 items")
	_, err = ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: many[:100]})
	noErr(t, err, "100 items are allowed")
	_, err = ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tbl), Item: Item{"pk": s("same"), "v": n("1")}}},
		{ConditionCheck: &types.ConditionCheck{TableName: aws.String(tbl), Key: Item{"pk": s("same")}, ConditionExpression: aws.String("attribute_exists(pk)")}},
	}})
	requireValidation(t, err, "two operations on one item")
	requireItem(t, nil, get(t, tbl, Item{"pk": s("same")}), "rejected transaction wrote nothing")
	_, err = ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{
		{Put: &types.Put{TableName: aws.String(tbl + "_missing"), Item: Item{"pk": s("x")}}},
	}})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Fatalf("unknown table: want ResourceNotFoundException, got %v", err)
	}
}

func TestConformance_Transact_GetItems(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	t1, t2 := hashTable(t), hashTable(t)
	put(t, t1, Item{"pk": s("a"), "v": n("1"), "w": s("x")})
	put(t, t2, Item{"pk": s("b"), "v": n("2")})
	out, err := ddb(t).TransactGetItems(ctx(t), &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: aws.String(t2), Key: Item{"pk": s("b")}}},
		{Get: &types.Get{TableName: aws.String(t1), Key: Item{"pk": s("missing")}}},
		{Get: &types.Get{TableName: aws.String(t1), Key: Item{"pk": s("a")}, ProjectionExpression: aws.String("#w"), ExpressionAttributeNames: names("#w", "w")}},
	}})
	noErr(t, err, "TransactGetItems")
	if len(out.Responses) != 3 {
		t.Fatalf("TransactGetItems returned %d responses, want 3 in request order", len(out.Responses))
	}
	requireItem(t, Item{"pk": s("b"), "v": n("2")}, out.Responses[0].Item, "response 0")
	requireItem(t, nil, out.Responses[1].Item, "response 1 (missing item)")
	requireItem(t, Item{"w": s("x")}, out.Responses[2].Item, "response 2 (projection)")
	_, err = ddb(t).TransactGetItems(ctx(t), &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: aws.String(t1), Key: Item{"pk": s("a")}}},
		{Get: &types.Get{TableName: aws.String(t1), Key: Item{"pk": s("a")}}},
	}})
	requireValidation(t, err, "TransactGetItems reading one item twice")
}
