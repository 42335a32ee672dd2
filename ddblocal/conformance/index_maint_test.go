package conformance

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
)

func gsiKeys(t testing.TB, tbl, index, cond string, vals Item, limit int32, forward bool) []string {
	t.Helper()
	var out []string
	var start Item
	for page := 0; ; page++ {
		in := &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String(index), KeyConditionExpression: aws.String(cond),
			ExpressionAttributeValues: vals, ExclusiveStartKey: start, ScanIndexForward: aws.Bool(forward)}
		if limit > 0 {
			in.Limit = aws.Int32(limit)
		}
		res := query(t, in)
		for _, it := range res.Items {
			out = append(out, fmt.Sprintf("%v/%v", plain(it["pk"]), plain(it["sk"])))
		}
		if len(res.LastEvaluatedKey) == 0 {
			return out
		}
		start = res.LastEvaluatedKey
		if page > 100 {
			t.Fatal("index paging never ended")
		}
	}
}

// TestConformance_Index_PagingThroughTies pages through a GSI whose items all
// share one index key: every item comes back exactly once.
func TestConformance_Index_PagingThroughTies(t *testing.T) {
	t.Parallel()
	tbl := indexedTable(t)
	for i := 0; i < 10; i++ {
		put(t, tbl, Item{"pk": s(fmt.Sprintf("p%d", i%3)), "sk": s(fmt.Sprint(i)), "gpk": s("g"), "gsk": n("1"), "lsk": s("same")})
	}
	for _, forward := range []bool{true, false} {
		got := gsiKeys(t, tbl, "gsi_keys", "gpk = :g", Item{":g": s("g")}, 3, forward)
		seen := map[string]int{}
		for _, k := range got {
			seen[k]++
		}
		if len(got) != 10 || len(seen) != 10 {
			t.Fatalf("GSI pages (forward=%v) returned %d items, %d distinct: %v; want all 10 once", forward, len(got), len(seen), got)
		}
		lsi := gsiKeys(t, tbl, "lsi", "pk = :p", Item{":p": s("p0")}, 1, forward)
		if len(lsi) != 4 {
			t.Fatalf("LSI pages (forward=%v) of p0 = %v, want its 4 items", forward, lsi)
		}
	}
}

// TestConformance_Index_Maintenance: writes that change, remove or replace
// index keys move items in and out of the indexes.
func TestConformance_Index_Maintenance(t *testing.T) {
	t.Parallel()
	tbl := indexedTable(t)
	c := ddb(t)
	key := Item{"pk": s("a"), "sk": s("1")}
	g := func(v string) []string {
		return gsiKeys(t, tbl, "gsi_all", "gpk = :g", Item{":g": s(v)}, 0, true)
	}
	lsi := func() []string { return gsiKeys(t, tbl, "lsi", "pk = :p", Item{":p": s("a")}, 0, true) }
	put(t, tbl, Item{"pk": s("a"), "sk": s("1"), "gpk": s("g1"), "gsk": n("1"), "lsk": s("l")})
	if fmt.Sprint(g("g1")) != "[S:a/S:1]" || fmt.Sprint(lsi()) != "[S:a/S:1]" {
		t.Fatalf("after put: g1 %v lsi %v", g("g1"), lsi())
	}
	_, err := c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: key,
		UpdateExpression: aws.String("SET gpk = :g2 REMOVE lsk"), ExpressionAttributeValues: Item{":g2": s("g2")}})
	noErr(t, err, "UpdateItem moving the GSI key and removing the LSI key")
	if len(g("g1")) != 0 || fmt.Sprint(g("g2")) != "[S:a/S:1]" || len(lsi()) != 0 {
		t.Fatalf("after update: g1 %v g2 %v lsi %v; want [] [a/1] []", g("g1"), g("g2"), lsi())
	}
	put(t, tbl, Item{"pk": s("a"), "sk": s("1"), "lsk": s("m")}) // replace: no GSI key any more
	if len(g("g2")) != 0 || fmt.Sprint(lsi()) != "[S:a/S:1]" {
		t.Fatalf("after replacing put: g2 %v lsi %v; want [] [a/1]", g("g2"), lsi())
	}
	_, err = c.DeleteItem(ctx(t), &dynamodb.DeleteItemInput{TableName: aws.String(tbl), Key: key})
	noErr(t, err, "DeleteItem")
	if len(lsi()) != 0 {
		t.Fatalf("after delete: lsi %v, want []", lsi())
	}
}

// TestConformance_Update_ConditionSeesOldItem: the condition of an
// UpdateItem is evaluated against the item before the update.
func TestConformance_Update_ConditionSeesOldItem(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	c := ddb(t)
	_, err := c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		UpdateExpression: aws.String("SET v = :v"), ConditionExpression: aws.String("attribute_not_exists(pk) AND attribute_not_exists(v)"),
		ExpressionAttributeValues: Item{":v": n("1")}})
	noErr(t, err, "conditional upsert of a missing item")
	_, err = c.UpdateItem(ctx(t), &dynamodb.UpdateItemInput{TableName: aws.String(tbl), Key: Item{"pk": s("a")},
		UpdateExpression: aws.String("SET v = :two"), ConditionExpression: aws.String("v = :one"),
		ExpressionAttributeValues: Item{":one": n("1"), ":two": n("2")}})
	noErr(t, err, "condition on the old value")
	requireItem(t, Item{"pk": s("a"), "v": n("2")}, get(t, tbl, Item{"pk": s("a")}), "after updates")
}
