package conformance

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// numTable creates pk (S) / sk (N) with items p/1..10 (v = sk*10, odd
// items tagged) and q/1.
func numTable(t testing.TB) string {
	t.Helper()
	tbl := rangeTable(t, types.ScalarAttributeTypeN)
	for i := 1; i <= 10; i++ {
		it := Item{"pk": s("p"), "sk": n(fmt.Sprint(i)), "v": n(fmt.Sprint(i * 10))}
		if i%2 == 1 {
			it["odd"] = bl(true)
		}
		put(t, tbl, it)
	}
	put(t, tbl, Item{"pk": s("q"), "sk": n("1")})
	return tbl
}

func sks(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		switch v := it["sk"].(type) {
		case *types.AttributeValueMemberN:
			out[i] = canonNum(v.Value)
		case *types.AttributeValueMemberS:
			out[i] = v.Value
		default:
			out[i] = fmt.Sprintf("%v", plain(it["sk"]))
		}
	}
	return out
}

func query(t testing.TB, in *dynamodb.QueryInput) *dynamodb.QueryOutput {
	t.Helper()
	out, err := ddb(t).Query(ctx(t), in)
	noErr(t, err, "Query "+aws.ToString(in.KeyConditionExpression))
	return out
}

func TestConformance_Query_KeyConditions(t *testing.T) {
	t.Parallel()
	tbl := numTable(t)
	cases := []struct {
		cond string
		vals Item
		want []string
	}{
		{"pk = :p", Item{":p": s("p")}, []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}},
		{"pk = :p AND sk = :a", Item{":p": s("p"), ":a": n("3")}, []string{"3"}},
		{"pk = :p AND sk < :a", Item{":p": s("p"), ":a": n("3")}, []string{"1", "2"}},
		{"pk = :p AND sk <= :a", Item{":p": s("p"), ":a": n("3")}, []string{"1", "2", "3"}},
		{"pk = :p AND sk > :a", Item{":p": s("p"), ":a": n("8")}, []string{"9", "10"}},
		{"pk = :p AND sk >= :a", Item{":p": s("p"), ":a": n("8")}, []string{"8", "9", "10"}},
		{"pk = :p AND sk BETWEEN :a AND :b", Item{":p": s("p"), ":a": n("2"), ":b": n("4")}, []string{"2", "3", "4"}},
		{"sk BETWEEN :a AND :b AND pk = :p", Item{":p": s("p"), ":a": n("9.5"), ":b": n("100")}, []string{"10"}},
		{"(pk = :p) AND (sk > :a)", Item{":p": s("p"), ":a": n("9")}, []string{"10"}},
		{"pk = :p", Item{":p": s("none")}, []string{}},
	}
	for _, tc := range cases {
		out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String(tc.cond), ExpressionAttributeValues: tc.vals})
		if got := sks(out.Items); fmt.Sprint(got) != fmt.Sprint(tc.want) {
			t.Errorf("%s %v: got sk %v, want %v", tc.cond, plainItem(tc.vals), got, tc.want)
		}
		if int(out.Count) != len(tc.want) {
			t.Errorf("%s: Count = %d, want %d", tc.cond, out.Count, len(tc.want))
		}
	}
}

func TestConformance_Query_BeginsWith(t *testing.T) {
	t.Parallel()
	tbl := rangeTable(t, types.ScalarAttributeTypeS)
	for _, k := range []string{"a", "ab", "abc", "abd", "b", "a\u00e9", "ac"} {
		put(t, tbl, Item{"pk": s("p"), "sk": s(k)})
	}
	out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p AND begins_with(sk, :x)"),
		ExpressionAttributeValues: Item{":p": s("p"), ":x": s("ab")}})
	if got := fmt.Sprint(sks(out.Items)); got != "[ab abc abd]" {
		t.Fatalf("begins_with ab: %s", got)
	}
	// Strings sort by UTF-8 bytes: "ac" < "aé" (0x63 < 0xC3) < "b".
	out = query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p AND sk > :x"),
		ExpressionAttributeValues: Item{":p": s("p"), ":x": s("abd")}})
	if got := fmt.Sprint(sks(out.Items)); got != "[ac a\u00e9 b]" {
		t.Fatalf("sk > abd (UTF-8 byte order): %s", got)
	}
}

func TestConformance_Query_OrderAndPaging(t *testing.T) {
	t.Parallel()
	tbl := numTable(t)
	out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"),
		ExpressionAttributeValues: Item{":p": s("p")}, ScanIndexForward: aws.Bool(false)})
	if got := fmt.Sprint(sks(out.Items)); got != "[10 9 8 7 6 5 4 3 2 1]" {
		t.Fatalf("ScanIndexForward=false: %s", got)
	}
	for _, forward := range []bool{true, false} {
		var all []string
		var start Item
		for page := 0; ; page++ {
			out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"),
				ExpressionAttributeValues: Item{":p": s("p")}, Limit: aws.Int32(3), ExclusiveStartKey: start, ScanIndexForward: aws.Bool(forward)})
			if len(out.Items) > 3 {
				t.Fatalf("Limit 3 returned %d items", len(out.Items))
			}
			all = append(all, sks(out.Items)...)
			if len(out.LastEvaluatedKey) == 0 {
				break
			}
			if len(out.Items) == 3 {
				requireItem(t, Item{"pk": out.Items[2]["pk"], "sk": out.Items[2]["sk"]}, out.LastEvaluatedKey, "LastEvaluatedKey is the last item's key")
			}
			start = out.LastEvaluatedKey
			if page > 10 {
				t.Fatal("paging never ended")
			}
		}
		want := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}
		if !forward {
			want = []string{"10", "9", "8", "7", "6", "5", "4", "3", "2", "1"}
		}
		if fmt.Sprint(all) != fmt.Sprint(want) {
			t.Fatalf("pages (forward=%v) = %v, want %v", forward, all, want)
		}
	}
}

func TestConformance_Query_FilterSelectProjection(t *testing.T) {
	t.Parallel()
	tbl := numTable(t)
	out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"),
		FilterExpression: aws.String("attribute_exists(odd) AND v > :v"), ExpressionAttributeValues: Item{":p": s("p"), ":v": n("40")}})
	if got := fmt.Sprint(sks(out.Items)); got != "[5 7 9]" || out.Count != 3 || out.ScannedCount != 10 {
		t.Fatalf("filter: items %s Count %d ScannedCount %d, want [5 7 9] 3 10", got, out.Count, out.ScannedCount)
	}
	// Limit bounds the items read, before the filter.
	out = query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"),
		FilterExpression: aws.String("attribute_exists(odd)"), ExpressionAttributeValues: Item{":p": s("p")}, Limit: aws.Int32(4)})
	if got := fmt.Sprint(sks(out.Items)); got != "[1 3]" || out.ScannedCount != 4 || len(out.LastEvaluatedKey) == 0 {
		t.Fatalf("Limit 4 + filter: items %s ScannedCount %d LEK %v, want [1 3] 4 set", got, out.ScannedCount, plainItem(out.LastEvaluatedKey))
	}
	requireItem(t, Item{"pk": s("p"), "sk": n("4")}, out.LastEvaluatedKey, "LastEvaluatedKey after a filtered-out item")
	out = query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p AND sk > :a"),
		ExpressionAttributeValues: Item{":p": s("p"), ":a": n("2")}, Select: types.SelectCount})
	if out.Count != 8 || len(out.Items) != 0 {
		t.Fatalf("Select COUNT: Count %d, %d items; want 8, none", out.Count, len(out.Items))
	}
	out = query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p AND sk = :a"),
		ExpressionAttributeValues: Item{":p": s("p"), ":a": n("3")}, ProjectionExpression: aws.String("v, odd")})
	requireItems(t, []Item{{"v": n("30"), "odd": bl(true)}}, out.Items, "ProjectionExpression")
}

func TestConformance_Query_Invalid(t *testing.T) {
	t.Parallel()
	tbl := numTable(t)
	idx := indexedTable(t)
	cases := []struct {
		name string
		in   *dynamodb.QueryInput
	}{
		{"NoHashKey", &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("sk = :a"), ExpressionAttributeValues: Item{":a": n("1")}}},
		{"NonKeyAttribute", &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p AND v = :a"), ExpressionAttributeValues: Item{":p": s("p"), ":a": n("1")}}},
		{"HashKeyNotEquality", &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk > :p"), ExpressionAttributeValues: Item{":p": s("p")}}},
		{"OrInKeyCondition", &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p OR sk = :a"), ExpressionAttributeValues: Item{":p": s("p"), ":a": n("1")}}},
		{"KeyTypeMismatch", &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p AND sk = :a"), ExpressionAttributeValues: Item{":p": s("p"), ":a": s("1")}}},
		{"FilterOnKey", &dynamodb.QueryInput{TableName: aws.String(tbl), KeyConditionExpression: aws.String("pk = :p"), FilterExpression: aws.String("sk = :a"), ExpressionAttributeValues: Item{":p": s("p"), ":a": n("1")}}},
		{"ConsistentReadOnGSI", &dynamodb.QueryInput{TableName: aws.String(idx), IndexName: aws.String("gsi_all"), ConsistentRead: aws.Bool(true), KeyConditionExpression: aws.String("gpk = :p"), ExpressionAttributeValues: Item{":p": s("g")}}},
		{"UnknownIndex", &dynamodb.QueryInput{TableName: aws.String(idx), IndexName: aws.String("nope"), KeyConditionExpression: aws.String("gpk = :p"), ExpressionAttributeValues: Item{":p": s("g")}}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			_, err := ddb(t).Query(ctx(t), tc.in)
			requireValidation(t, err, tc.name)
		})
	}
}

func TestConformance_Query_SparseIndexes(t *testing.T) {
	t.Parallel()
	tbl := indexedTable(t)
	put(t, tbl,
		Item{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("3"), "lsk": s("z"), "extra": s("e1"), "other": s("o1")},
		Item{"pk": s("a"), "sk": s("2"), "gpk": s("g"), "gsk": n("1"), "extra": s("e2"), "other": s("o2")},
		Item{"pk": s("b"), "sk": s("1"), "gpk": s("g"), "gsk": n("2"), "lsk": s("y")},
		Item{"pk": s("a"), "sk": s("3"), "lsk": s("x"), "other": s("o3")},
		Item{"pk": s("c"), "sk": s("1"), "gpk": s("h"), "gsk": n("1")},
	)
	q := func(index, cond string, vals Item) []Item {
		return query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String(index),
			KeyConditionExpression: aws.String(cond), ExpressionAttributeValues: vals}).Items
	}
	g := Item{":g": s("g")}
	requireItems(t, []Item{
		{"pk": s("a"), "sk": s("2"), "gpk": s("g"), "gsk": n("1"), "extra": s("e2"), "other": s("o2")},
		{"pk": s("b"), "sk": s("1"), "gpk": s("g"), "gsk": n("2"), "lsk": s("y")},
		{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("3"), "lsk": s("z"), "extra": s("e1"), "other": s("o1")},
	}, q("gsi_all", "gpk = :g", g), "GSI ALL, ordered by gsk, sparse")
	requireItems(t, []Item{
		{"pk": s("a"), "sk": s("2"), "gpk": s("g"), "gsk": n("1")},
		{"pk": s("b"), "sk": s("1"), "gpk": s("g"), "gsk": n("2")},
		{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("3")},
	}, q("gsi_keys", "gpk = :g", g), "GSI KEYS_ONLY: table and index keys")
	requireItems(t, []Item{
		{"pk": s("a"), "sk": s("2"), "gpk": s("g"), "gsk": n("1"), "extra": s("e2")},
		{"pk": s("b"), "sk": s("1"), "gpk": s("g"), "gsk": n("2")},
		{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("3"), "extra": s("e1")},
	}, q("gsi_incl", "gpk = :g", g), "GSI INCLUDE extra")
	requireItems(t, []Item{
		{"pk": s("a"), "sk": s("2"), "gpk": s("g"), "gsk": n("1")},
	}, q("gsi_keys", "gpk = :g AND gsk < :n", Item{":g": s("g"), ":n": n("2")}), "GSI range condition")
	requireItems(t, []Item{
		{"pk": s("a"), "sk": s("3"), "lsk": s("x"), "other": s("o3")},
		{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("3"), "lsk": s("z"), "extra": s("e1"), "other": s("o1")},
	}, q("lsi", "pk = :a", Item{":a": s("a")}), "LSI ordered by lsk, sparse")
	out := query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("lsi"), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("pk = :a AND lsk > :x"), ExpressionAttributeValues: Item{":a": s("a"), ":x": s("x")}})
	if got := fmt.Sprint(sks(out.Items)); got != "[1]" {
		t.Fatalf("LSI consistent query lsk > x: %s", got)
	}
	// Paging through an index: LastEvaluatedKey holds table and index keys.
	out = query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("gsi_all"), Limit: aws.Int32(1),
		KeyConditionExpression: aws.String("gpk = :g"), ExpressionAttributeValues: g})
	requireItem(t, Item{"pk": s("a"), "sk": s("2"), "gpk": s("g"), "gsk": n("1")}, out.LastEvaluatedKey, "GSI LastEvaluatedKey")
	out = query(t, &dynamodb.QueryInput{TableName: aws.String(tbl), IndexName: aws.String("gsi_all"), Limit: aws.Int32(1),
		KeyConditionExpression: aws.String("gpk = :g"), ExpressionAttributeValues: g, ExclusiveStartKey: out.LastEvaluatedKey})
	if got := fmt.Sprint(sks(out.Items)); got != "[1]" || aws.ToString(&out.Items[0]["pk"].(*types.AttributeValueMemberS).Value) != "b" {
		t.Fatalf("GSI second page: %v", plainItem(out.Items[0]))
	}
	// A write with an index key of the wrong type is rejected.
	_, err := ddb(t).PutItem(ctx(t), &dynamodb.PutItemInput{TableName: aws.String(tbl), Item: Item{"pk": s("c"), "sk": s("2"), "gpk": n("7")}})
	requireValidation(t, err, "GSI key attribute of the wrong type")
}
