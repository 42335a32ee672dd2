package ddblocal

import (
	"fmt"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

func TestQuery_PaginationOrderAndSparseIndex(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "qry", false, func(in *dynamodb.CreateTableInput) {
		in.AttributeDefinitions = append(in.AttributeDefinitions,
			types.AttributeDefinition{AttributeName: aws.String("sk"), AttributeType: types.ScalarAttributeTypeN},
			types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS})
		in.KeySchema = append(in.KeySchema, types.KeySchemaElement{AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{
			IndexName:  aws.String("byG"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}, {AttributeName: aws.String("sk"), KeyType: types.KeyTypeRange}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly},
		}}
	})
	// Numeric sort keys: 2 < 10 < 100 numerically (not textually).
	for i, v := range []string{"100", "2", "10", "-3", "7.5"} {
		it := map[string]types.AttributeValue{"pk": s("h"), "sk": n(v), "x": n(fmt.Sprint(i))}
		if i%2 == 0 {
			it["g"] = s("G")
		}
		if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("qry"), Item: it}); err != nil {
			t.Fatal(err)
		}
	}
	var got []string
	var esk map[string]types.AttributeValue
	pages := 0
	for {
		out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("qry"), KeyConditionExpression: aws.String("pk = :h"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":h": s("h")}, Limit: aws.Int32(2), ExclusiveStartKey: esk})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range out.Items {
			got = append(got, it["sk"].(*types.AttributeValueMemberN).Value)
		}
		esk = out.LastEvaluatedKey
		if esk == nil {
			break
		}
	}
	if want := "[-3 2 7.5 10 100]"; fmt.Sprint(got) != want || pages != 3 {
		t.Fatalf("query order %v in %d pages, want %s in 3", got, pages, want)
	}
	got, esk, pages = nil, nil, 0
	for {
		out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("qry"), KeyConditionExpression: aws.String("pk = :h AND sk BETWEEN :a AND :b"),
			ExpressionAttributeValues: map[string]types.AttributeValue{":h": s("h"), ":a": n("2"), ":b": n("100")}, ScanIndexForward: aws.Bool(false),
			Limit: aws.Int32(2), ExclusiveStartKey: esk})
		if err != nil {
			t.Fatal(err)
		}
		pages++
		for _, it := range out.Items {
			got = append(got, it["sk"].(*types.AttributeValueMemberN).Value)
		}
		if esk = out.LastEvaluatedKey; esk == nil {
			break
		}
	}
	if want := "[100 10 7.5 2]"; fmt.Sprint(got) != want || pages != 3 {
		t.Fatalf("backward BETWEEN query %v in %d pages, want %s in 3", got, pages, want)
	}
	out, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("qry"), KeyConditionExpression: aws.String("pk = :h AND sk BETWEEN :a AND :b"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":h": s("h"), ":a": n("2"), ":b": n("10")}, ScanIndexForward: aws.Bool(false),
		FilterExpression: aws.String("x <> :x"), ExpressionAttributeNames: nil})
	if err == nil {
		t.Fatalf("an undefined :x must be a ValidationException; got %v", out)
	}
	out, err = c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("qry"), IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G")}, Limit: aws.Int32(1)})
	if err != nil {
		t.Fatal(err)
	}
	if len(out.Items) != 1 || out.Items[0]["x"] != nil || out.LastEvaluatedKey["g"] == nil || out.LastEvaluatedKey["pk"] == nil || out.LastEvaluatedKey["sk"] == nil {
		t.Fatalf("index page: items %v LEK %v", out.Items, out.LastEvaluatedKey)
	}
	cnt, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("qry"), IndexName: aws.String("byG"), KeyConditionExpression: aws.String("g = :g"),
		ExpressionAttributeValues: map[string]types.AttributeValue{":g": s("G")}, Select: types.SelectCount})
	if err != nil || cnt.Count != 3 {
		t.Fatalf("sparse index count = %d (%v), want 3", cnt.Count, err)
	}
}
