package ddblocal

import (
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestScan_SegmentsAndPageLimit(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "scn", false)
	big := strings.Repeat("x", 100_000)
	const total = 30
	for i := 0; i < total; i++ {
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("scn"), Item: map[string]types.AttributeValue{"pk": s(fmt.Sprint(i)), "b": s(big)}}); err != nil {
			t.Fatal(err)
		}
	}
	seen := map[string]int{}
	maxPage := 0
	for seg := int32(0); seg < 3; seg++ {
		var esk map[string]types.AttributeValue
		for {
			out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("scn"), Segment: aws.Int32(seg), TotalSegments: aws.Int32(3), ExclusiveStartKey: esk})
			if err != nil {
				t.Fatal(err)
			}
			maxPage = max(maxPage, len(out.Items))
			for _, it := range out.Items {
				seen[it["pk"].(*types.AttributeValueMemberS).Value]++
			}
			if esk = out.LastEvaluatedKey; esk == nil {
				break
			}
		}
	}
	if len(seen) != total {
		t.Fatalf("segments saw %d distinct items, want %d", len(seen), total)
	}
	for k, v := range seen {
		if v != 1 {
			t.Fatalf("item %s seen %d times", k, v)
		}
	}
	if maxPage > 11 {
		t.Fatalf("a page held %d items of 100 KB; want at most ~1 MB per page", maxPage)
	}
	// Like DynamoDB, Scan follows a hash of the partition key, not its value.
	var order []string
	var esk map[string]types.AttributeValue
	for {
		out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("scn"), ProjectionExpression: aws.String("pk"), Limit: aws.Int32(7), ExclusiveStartKey: esk})
		if err != nil {
			t.Fatal(err)
		}
		for _, it := range out.Items {
			order = append(order, it["pk"].(*types.AttributeValueMemberS).Value)
		}
		if esk = out.LastEvaluatedKey; esk == nil {
			break
		}
	}
	if len(order) != total || sort.StringsAreSorted(order) {
		t.Fatalf("scan order %v: want all %d items, not sorted by key", order, total)
	}
	_, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("scn"), Segment: aws.Int32(0), TotalSegments: aws.Int32(1000),
		ExclusiveStartKey: map[string]types.AttributeValue{"pk": s(order[len(order)-1])}})
	if err == nil {
		t.Fatal("an ExclusiveStartKey outside the segment must be refused")
	}
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("scn")})
	if err != nil || aws.ToInt64(d.Table.ItemCount) != total {
		t.Fatalf("ItemCount = %v (%v)", d.Table.ItemCount, err)
	}
}

func TestStreams_EnableDisableAndEvents(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "strm", false)
	enable := func() string {
		out, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("strm"),
			StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages}})
		if err != nil {
			t.Fatal(err)
		}
		return aws.ToString(out.TableDescription.LatestStreamArn)
	}
	first := enable()
	if _, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("strm"), StreamSpecification: &types.StreamSpecification{StreamEnabled: aws.Bool(false)}}); err != nil {
		t.Fatal(err)
	}
	second := enable()
	if first == "" || first == second {
		t.Fatalf("re-enabling gave ARN %q after %q; want a new one", second, first)
	}
	key := map[string]types.AttributeValue{"pk": s("k")}
	steps := []func() error{
		func() error {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("strm"), Key: key, UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": n("1")}})
			return err
		},
		func() error { // changes nothing: no record
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("strm"), Key: key, UpdateExpression: aws.String("SET v = :v"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": n("1.0")}})
			return err
		},
		func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("strm"), Item: map[string]types.AttributeValue{"pk": s("k"), "v": n("2")}})
			return err
		},
		func() error {
			_, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("strm"), Key: key})
			return err
		},
	}
	for i, f := range steps {
		if err := f(); err != nil {
			t.Fatalf("step %d: %v", i, err)
		}
	}
	names, _ := readStream(t, srv, c, "strm")
	if fmt.Sprint(names) != "[INSERT MODIFY REMOVE]" {
		t.Fatalf("records %v, want [INSERT MODIFY REMOVE]", names)
	}
}
