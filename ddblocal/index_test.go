package ddblocal

import (
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestIndex_FollowsWritesAndBackfills(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "ixt", false)
	put := func(pk, g string) {
		it := map[string]types.AttributeValue{"pk": s(pk)}
		if g != "" {
			it["g"] = s(g)
		}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("ixt"), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	put("1", "A")
	put("2", "A")
	put("3", "")
	// A GSI added later is backfilled from existing items.
	if _, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("ixt"),
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS}},
		GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
			IndexName: aws.String("byG"), KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeAll}}}}}); err != nil {
		t.Fatal(err)
	}
	count := func(g string) int32 {
		out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("ixt"), IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":g": s(g)}, Select: types.SelectCount})
		if err != nil {
			t.Fatal(err)
		}
		return out.Count
	}
	if n := count("A"); n != 2 {
		t.Fatalf("backfilled index has %d items for A, want 2", n)
	}
	put("2", "B") // moves between index partitions
	if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("ixt"), Key: map[string]types.AttributeValue{"pk": s("1")},
		UpdateExpression: aws.String("REMOVE g")}); err != nil { // leaves the sparse index
		t.Fatal(err)
	}
	put("3", "B")
	if a, b := count("A"), count("B"); a != 0 || b != 2 {
		t.Fatalf("index counts A=%d B=%d, want 0 and 2", a, b)
	}
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("ixt")})
	if err != nil || len(d.Table.GlobalSecondaryIndexes) != 1 || aws.ToInt64(d.Table.GlobalSecondaryIndexes[0].ItemCount) != 2 {
		t.Fatalf("DescribeTable index: %+v %v", d.Table.GlobalSecondaryIndexes, err)
	}
	_, err = c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("ixt"), IndexName: aws.String("byG"), ConsistentRead: aws.Bool(true),
		KeyConditionExpression: aws.String("g = :g"), ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("B")}})
	if err == nil {
		t.Fatal("a consistent read on a GSI must be refused")
	}
}
