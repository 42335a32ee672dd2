package conformance

import (
	"fmt"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestConformance_Keys_NumberKeysCompareNumerically: 1, 1.0 and 1E0 are one
// key.
func TestConformance_Keys_NumberKeysCompareNumerically(t *testing.T) {
	t.Parallel()
	tbl := rangeTable(t, types.ScalarAttributeTypeN)
	put(t, tbl, Item{"pk": s("a"), "sk": n("1.0"), "v": n("1")})
	put(t, tbl, Item{"pk": s("a"), "sk": n("1"), "v": n("2")})
	requireItem(t, Item{"pk": s("a"), "sk": n("1"), "v": n("2")}, get(t, tbl, Item{"pk": s("a"), "sk": n("1E0")}), "one item under 1, 1.0 and 1E0")
	out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: Item{":p": s("a")}})
	if out.Count != 1 {
		t.Fatalf("Query found %d items, want 1", out.Count)
	}
}

// TestConformance_Keys_SortOrder: binary sort keys order by unsigned bytes,
// string sort keys by UTF-8 bytes (so "B" < "a").
func TestConformance_Keys_SortOrder(t *testing.T) {
	t.Parallel()
	bt := rangeTable(t, types.ScalarAttributeTypeB)
	for _, v := range [][]byte{{0xff}, {0x00}, {0x80}, {0x7f}, {0x80, 0x00}} {
		put(t, bt, Item{"pk": s("p"), "sk": b(v)})
	}
	out := query(t, &dynamodb.QueryInput{TableName: aws.String(bt), KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: Item{":p": s("p")}})
	var got []string
	for _, it := range out.Items {
		got = append(got, fmt.Sprintf("%x", it["sk"].(*types.AttributeValueMemberB).Value))
	}
	if fmt.Sprint(got) != "[00 7f 80 8000 ff]" {
		t.Fatalf("binary sort key order = %v, want [00 7f 80 8000 ff]", got)
	}
	st := rangeTable(t, types.ScalarAttributeTypeS)
	for _, v := range []string{"b", "a", "B", "A", "aa", "_"} {
		put(t, st, Item{"pk": s("p"), "sk": s(v)})
	}
	out = query(t, &dynamodb.QueryInput{TableName: aws.String(st), KeyConditionExpression: aws.String("pk = :p"), ExpressionAttributeValues: Item{":p": s("p")}})
	if got := fmt.Sprint(sks(out.Items)); got != "[A B _ a aa b]" {
		t.Fatalf("string sort key order = %s, want [A B _ a aa b]", got)
	}
}

// TestConformance_Keys_EmptyIndexKey: empty strings are allowed in non-key
// attributes but not in table or index key attributes.
func TestConformance_Keys_EmptyIndexKey(t *testing.T) {
	t.Parallel()
	// Developer Guide, Data types (String): the minimum length can be zero only
	// if the attribute is not a key of an index or table. dynalite 4.0.0 only
	// checks table keys.
	skipOnDynalite(t, "accepts empty strings in secondary index key attributes")
	tbl := indexedTable(t)
	_, err := ddb(t).PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: Item{"pk": s("a"), "sk": s("1"), "gpk": s(""), "gsk": n("1")}})
	requireValidation(t, err, "empty string in a GSI key attribute")
	_, err = ddb(t).PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: Item{"pk": s("a"), "sk": s("1"), "lsk": s("")}})
	requireValidation(t, err, "empty string in an LSI key attribute")
	_, err = ddb(t).UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a"), "sk": s("1")},
		UpdateExpression: aws.String("SET gpk = :e, gsk = :one"), ExpressionAttributeValues: Item{":e": s(""), ":one": n("1")}})
	requireValidation(t, err, "UpdateItem setting a GSI key attribute to an empty string")
	put(t, tbl, Item{"pk": s("a"), "sk": s("1"), "extra": s("")})
}

// TestConformance_Transact_AggregateSize: the items of one transaction may
// not exceed 4 MB together (TransactWriteItems reference).
func TestConformance_Transact_AggregateSize(t *testing.T) {
	t.Parallel()
	requireTxOps(t)
	tbl := hashTable(t)
	blob := strings.Repeat("x", 390_000)
	var items []types.TransactWriteItem
	for i := 0; i < 11; i++ { // 11 x 390 KB > 4 MB
		items = append(items, types.TransactWriteItem{Put: &types.Put{TableName: aws.String(tbl), Item: Item{"pk": s(fmt.Sprint(i)), "blob": s(blob)}}})
	}
	_, err := ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: items})
	requireValidation(t, err, "transaction over 4 MB")
	requireItem(t, nil, get(t, tbl, Item{"pk": s("0")}), "nothing written")
	_, err = ddb(t).TransactWriteItems(ctx(t), &dynamodb.TransactWriteItemsInput{TransactItems: items[:10]})
	noErr(t, err, "transaction of 3.9 MB")
}
