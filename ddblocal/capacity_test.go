package ddblocal

import (
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestCapacity_ReturnConsumedCapacity(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "cap", false)
	big := strings.Repeat("x", 5000) // 5 KB: 5 write units, 2 read units
	p, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("cap"), Item: map[string]types.AttributeValue{"pk": s("a"), "b": s(big)},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal})
	if err != nil || p.ConsumedCapacity == nil || aws.ToFloat64(p.ConsumedCapacity.CapacityUnits) != 5 || aws.ToString(p.ConsumedCapacity.TableName) != "cap" {
		t.Fatalf("PutItem capacity %+v %v", p.ConsumedCapacity, err)
	}
	g, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("cap"), Key: map[string]types.AttributeValue{"pk": s("a")},
		ReturnConsumedCapacity: types.ReturnConsumedCapacityIndexes})
	if err != nil || aws.ToFloat64(g.ConsumedCapacity.CapacityUnits) != 1 || g.ConsumedCapacity.Table == nil {
		t.Fatalf("GetItem capacity %+v %v", g.ConsumedCapacity, err)
	}
	tw, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{ReturnConsumedCapacity: types.ReturnConsumedCapacityTotal,
		TransactItems: []types.TransactWriteItem{{Put: &types.Put{TableName: aws.String("cap"), Item: map[string]types.AttributeValue{"pk": s("b")}}}}})
	if err != nil || len(tw.ConsumedCapacity) != 1 || aws.ToFloat64(tw.ConsumedCapacity[0].CapacityUnits) != 2 {
		t.Fatalf("TransactWriteItems capacity %+v %v", tw.ConsumedCapacity, err)
	}
	q, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("cap"), KeyConditionExpression: aws.String("pk = :a"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":a": s("zzz")}})
	if err != nil || q.ConsumedCapacity != nil {
		t.Fatalf("Query without ReturnConsumedCapacity: %+v %v", q.ConsumedCapacity, err)
	}
}
