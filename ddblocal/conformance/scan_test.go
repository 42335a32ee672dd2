package conformance

import (
	"fmt"
	"sort"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func scanAll(t testing.TB, in dynamodb.ScanInput) (items []Item, pages int) {
	t.Helper()
	for {
		out, err := ddb(t).Scan(ctx(t), &in)
		noErr(t, err, "Scan")
		if in.Limit != nil && len(out.Items) > int(*in.Limit) {
			t.Fatalf("Scan Limit %d returned %d items", *in.Limit, len(out.Items))
		}
		items = append(items, out.Items...)
		pages++
		if len(out.LastEvaluatedKey) == 0 {
			return items, pages
		}
		in.ExclusiveStartKey = out.LastEvaluatedKey
		if pages > 1000 {
			t.Fatal("Scan paging never ended")
		}
	}
}

func keysOf(items []Item) []string {
	out := make([]string, len(items))
	for i, it := range items {
		out[i] = fmt.Sprintf("%v/%v", plain(it["pk"]), plain(it["sk"]))
	}
	sort.Strings(out)
	return out
}

func TestConformance_Scan_All(t *testing.T) {
	t.Parallel()
	tbl := numTable(t)
	items, _ := scanAll(t, dynamodb.ScanInput{TableName: aws.String(tbl)})
	if len(items) != 11 {
		t.Fatalf("Scan returned %d items, want 11", len(items))
	}
	paged, pages := scanAll(t, dynamodb.ScanInput{TableName: aws.String(tbl), Limit: aws.Int32(4)})
	if fmt.Sprint(keysOf(paged)) != fmt.Sprint(keysOf(items)) || pages < 3 {
		t.Fatalf("Scan with Limit 4 over %d pages returned %v, want %v", pages, keysOf(paged), keysOf(items))
	}
}

func TestConformance_Scan_FilterCountProjection(t *testing.T) {
	t.Parallel()
	tbl := numTable(t)
	out, err := ddb(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), FilterExpression: aws.String("v BETWEEN :a AND :b"),
		ExpressionAttributeValues: Item{":a": n("20"), ":b": n("40")}, ProjectionExpression: aws.String("sk")})
	noErr(t, err, "Scan")
	if out.Count != 3 || out.ScannedCount != 11 {
		t.Fatalf("filtered scan Count %d ScannedCount %d, want 3 and 11", out.Count, out.ScannedCount)
	}
	for _, it := range out.Items {
		if len(it) != 1 || it["sk"] == nil {
			t.Fatalf("ProjectionExpression sk returned %v", plainItem(it))
		}
	}
	cnt, err := ddb(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), Select: types.SelectCount,
		FilterExpression: aws.String("attribute_not_exists(odd)")})
	noErr(t, err, "Scan COUNT")
	if cnt.Count != 6 || len(cnt.Items) != 0 {
		t.Fatalf("Select COUNT: Count %d, %d items; want 6, none", cnt.Count, len(cnt.Items))
	}
}

func TestConformance_Scan_ParallelSegments(t *testing.T) {
	t.Parallel()
	tbl := hashTable(t)
	for i := 0; i < 40; i++ {
		put(t, tbl, Item{"pk": s(fmt.Sprintf("k%02d", i))})
	}
	seen := map[string]int{}
	for seg := int32(0); seg < 4; seg++ {
		items, _ := scanAll(t, dynamodb.ScanInput{TableName: aws.String(tbl), Segment: aws.Int32(seg), TotalSegments: aws.Int32(4), Limit: aws.Int32(7)})
		for _, it := range items {
			seen[it["pk"].(*types.AttributeValueMemberS).Value]++
		}
	}
	if len(seen) != 40 {
		t.Fatalf("segments together returned %d distinct items, want 40", len(seen))
	}
	for k, c := range seen {
		if c != 1 {
			t.Fatalf("item %s returned by %d segments, want exactly 1", k, c)
		}
	}
	_, err := ddb(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), Segment: aws.Int32(4), TotalSegments: aws.Int32(4)})
	requireValidation(t, err, "Segment >= TotalSegments")
	// AWS: Segment and TotalSegments must be given together. (Segment 1, not 0:
	// dynalite 4.0.0 misses the rule for Segment 0, a falsy value in JavaScript.)
	_, err = ddb(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), Segment: aws.Int32(1)})
	requireValidation(t, err, "Segment without TotalSegments")
	_, err = ddb(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), TotalSegments: aws.Int32(2)})
	requireValidation(t, err, "TotalSegments without Segment")
}

func TestConformance_Scan_Index(t *testing.T) {
	t.Parallel()
	tbl := indexedTable(t)
	put(t, tbl,
		Item{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("1"), "other": s("o")},
		Item{"pk": s("a"), "sk": s("2"), "other": s("o")},
	)
	out, err := ddb(t).Scan(ctx(t), &dynamodb.ScanInput{TableName: aws.String(tbl), IndexName: aws.String("gsi_keys")})
	noErr(t, err, "Scan GSI")
	requireItems(t, []Item{{"pk": s("a"), "sk": s("1"), "gpk": s("g"), "gsk": n("1")}}, out.Items, "Scan of a sparse KEYS_ONLY GSI")
}
