package ddblocal

import (
	"errors"
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestBatch_WriteGetAndTransactGet(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "bw1", false)
	mkTable(t, c, "bw2", true)
	var reqs []types.WriteRequest
	for i := 0; i < 20; i++ {
		reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"pk": s(fmt.Sprint(i)), "v": n(fmt.Sprint(i))}}})
	}
	out, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{
		"bw1": reqs,
		"bw2": {{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"pk": s("x"), "sk": s("y")}}}},
	}})
	if err != nil || len(out.UnprocessedItems) != 0 {
		t.Fatalf("BatchWriteItem: %v %v", out, err)
	}
	_, err = c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"bw1": reqs, "bw2": reqs[:6]}})
	var ve interface{ ErrorMessage() string }
	if !errors.As(err, &ve) || ve.ErrorMessage() != "1 validation error detected: Value '{bw1=[...]}' at 'requestItems' failed to satisfy constraint: Map value must satisfy constraint: [Member must have length less than or equal to 25, Member must have length greater than or equal to 1]" {
		t.Fatalf("26 writes: %v", err)
	}
	if _, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"bw1": {
		{DeleteRequest: &types.DeleteRequest{Key: map[string]types.AttributeValue{"pk": s("0")}}},
	}}}); err != nil {
		t.Fatal(err)
	}
	g, err := c.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{RequestItems: map[string]types.KeysAndAttributes{
		"bw1": {Keys: []map[string]types.AttributeValue{{"pk": s("0")}, {"pk": s("1")}, {"pk": s("19")}}, ProjectionExpression: aws.String("v"), ConsistentRead: aws.Bool(true)},
		"bw2": {Keys: []map[string]types.AttributeValue{{"pk": s("x"), "sk": s("y")}}},
	}})
	if err != nil || len(g.Responses["bw1"]) != 2 || len(g.Responses["bw2"]) != 1 || g.Responses["bw1"][0]["pk"] != nil {
		t.Fatalf("BatchGetItem: %v %v", g, err)
	}
	tg, err := c.TransactGetItems(ctx, &dynamodb.TransactGetItemsInput{TransactItems: []types.TransactGetItem{
		{Get: &types.Get{TableName: aws.String("bw1"), Key: map[string]types.AttributeValue{"pk": s("0")}}},
		{Get: &types.Get{TableName: aws.String("bw1"), Key: map[string]types.AttributeValue{"pk": s("5")}}},
		{Get: &types.Get{TableName: aws.String("bw2"), Key: map[string]types.AttributeValue{"pk": s("x"), "sk": s("y")}}},
	}})
	if err != nil || len(tg.Responses) != 3 || tg.Responses[0].Item != nil || tg.Responses[1].Item["v"] == nil || tg.Responses[2].Item == nil {
		t.Fatalf("TransactGetItems: %+v %v", tg, err)
	}
}

func TestTables_ListDeleteRecreate(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	for _, name := range []string{"t-c", "t-a", "t-b"} {
		mkTable(t, c, name, false)
	}
	_, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{TableName: aws.String("t-a"), BillingMode: types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}}})
	var riu *types.ResourceInUseException
	if !errors.As(err, &riu) {
		t.Fatalf("CreateTable twice: %v", err)
	}
	l, err := c.ListTables(ctx, &dynamodb.ListTablesInput{Limit: aws.Int32(2)})
	if err != nil || fmt.Sprint(l.TableNames) != "[t-a t-b]" || aws.ToString(l.LastEvaluatedTableName) != "t-b" {
		t.Fatalf("ListTables page 1: %v %v", l, err)
	}
	l, err = c.ListTables(ctx, &dynamodb.ListTablesInput{ExclusiveStartTableName: l.LastEvaluatedTableName})
	if err != nil || fmt.Sprint(l.TableNames) != "[t-c]" || l.LastEvaluatedTableName != nil {
		t.Fatalf("ListTables page 2: %v %v", l, err)
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("t-a"), Item: map[string]types.AttributeValue{"pk": s("1")}}); err != nil {
		t.Fatal(err)
	}
	if _, err := c.DeleteTable(ctx, &dynamodb.DeleteTableInput{TableName: aws.String("t-a")}); err != nil {
		t.Fatal(err)
	}
	_, err = c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("t-a")})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) || rnf.ErrorMessage() != "Requested resource not found: Table: t-a not found" {
		t.Fatalf("DescribeTable after delete: %v", err)
	}
	mkTable(t, c, "t-a", false)
	g, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("t-a"), Key: map[string]types.AttributeValue{"pk": s("1")}})
	if err != nil || g.Item != nil {
		t.Fatalf("recreated table has old items: %v %v", g.Item, err)
	}
}

func TestTables_ARNAsTableName(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "byarn", false)
	d, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("byarn")})
	if err != nil {
		t.Fatal(err)
	}
	arn := d.Table.TableArn
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: arn, Item: map[string]types.AttributeValue{"pk": s("a")}}); err != nil {
		t.Fatalf("PutItem by ARN: %v", err)
	}
	g, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("byarn"), Key: map[string]types.AttributeValue{"pk": s("a")}})
	if err != nil || g.Item == nil {
		t.Fatalf("GetItem by name after a put by ARN: %v %v", g, err)
	}
}
