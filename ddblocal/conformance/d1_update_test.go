package conformance

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_Update_ListAppendsInIndexOrder: SET and ADD of list
// elements past a list's end append them in element order, whatever order
// and clause they are written in (DynamoDB applies them in index order;
// the case of dynalite's tests, run against DynamoDB).
func TestConformance_Update_ListAppendsInIndexOrder(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "c": l(n("1"), n("3")), "b": m(Item{"a": n("1"), "b": n("2"), "c": n("3")})})
	c := ddb(t)
	_, err := c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		UpdateExpression:          aws.String("SET c[4] = :four, c[2] = :two, c[6] = :six"),
		ExpressionAttributeValues: Item{":two": s("two"), ":four": s("four"), ":six": s("six")}})
	noErr(t, err, "UpdateItem SET past the end")
	out, err := c.GetItem(ctx(t), &dynamodb.GetItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")}, ConsistentRead: aws.Bool(true)})
	noErr(t, err, "GetItem")
	requireItem(t, Item{"pk": s("a"), "c": l(n("1"), n("3"), s("two"), s("four"), s("six")), "b": m(Item{"a": n("1"), "b": n("2"), "c": n("3")})},
		out.Item, "list after SET c[4], c[2], c[6]")
	up, err := c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		UpdateExpression:          aws.String("set b.c=((c[1])+(b.a)),b.a = pk,c[1] = pk, c[9] = b.a - b.b, c[7] = b.c add c[13] :b, c[11] :a"),
		ExpressionAttributeValues: Item{":a": n("2"), ":b": ss("a")}, ReturnValues: types.ReturnValueAllNew})
	noErr(t, err, "UpdateItem SET and ADD past the end")
	requireItem(t, Item{"pk": s("a"), "b": m(Item{"a": s("a"), "b": n("2"), "c": n("4")}),
		"c": l(n("1"), s("a"), s("two"), s("four"), s("six"), n("3"), n("-1"), n("2"), ss("a"))}, up.Attributes,
		"item after SET c[9], c[7] and ADD c[13], c[11]")
}

// TestConformance_Condition_SizeWithoutSpaces: size() parses written
// tight against its operator and in parentheses ("size(b)>:n",
// "((size(b)) = :n)"), as DynamoDB's grammar reads it.
func TestConformance_Condition_SizeWithoutSpaces(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	put(t, tbl, Item{"pk": s("a"), "b": s("abc")}, Item{"pk": s("b"), "b": s("abcdef")})
	for _, f := range []string{"size(b)>:n", "(size(b))>:n", "((size(b)) > :n) AND size(b)<>:n"} {
		items, _ := scanAll(t, dynamodb.ScanInput{TableName: aws.String(tbl), FilterExpression: aws.String(f),
			ExpressionAttributeValues: Item{":n": n("3")}})
		if got := keysOf(items); len(got) != 1 || got[0] != "S:b/<nil>" {
			t.Fatalf("FilterExpression %q: %v, want item b", f, got)
		}
	}
}
