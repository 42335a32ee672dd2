package ddblocal

import (
	"fmt"
	"sync"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestTables_SchemaChangesUnderLoad changes a table's indexes and stream
// while clients write and read it (run with -race).
func TestTables_SchemaChangesUnderLoad(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "churn", true)
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	wg.Add(1)
	go func() { // schema churn
		defer wg.Done()
		for i := 0; i < 10; i++ {
			_, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("churn"),
				AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS}},
				GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
					IndexName: aws.String("byG"), KeySchema: []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
					Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}}})
			if err != nil {
				errs <- err
				return
			}
			if _, err := c.UpdateTable(ctx, &dynamodb.UpdateTableInput{TableName: aws.String("churn"),
				GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Delete: &types.DeleteGlobalSecondaryIndexAction{IndexName: aws.String("byG")}}}}); err != nil {
				errs <- err
				return
			}
		}
	}()
	for w := 0; w < 3; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 40; i++ {
				item := map[string]types.AttributeValue{"pk": s(fmt.Sprint(w)), "sk": s(fmt.Sprint(i)), "g": s("x")}
				if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("churn"), Item: item}); err != nil {
					errs <- err
					return
				}
				if _, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
					TableName: aws.String("churn"), Key: map[string]types.AttributeValue{"pk": s(fmt.Sprint(w)), "sk": s(fmt.Sprint(i))},
					UpdateExpression: aws.String("SET n = :n"), ExpressionAttributeValues: map[string]types.AttributeValue{":n": n("1")}}}}}); err != nil {
					errs <- err
					return
				}
				if _, err := c.Query(ctx, &dynamodb.QueryInput{TableName: aws.String("churn"), KeyConditionExpression: aws.String("pk = :p"),
					ExpressionAttributeValues: map[string]types.AttributeValue{":p": s(fmt.Sprint(w))}, Limit: aws.Int32(5)}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	out, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("churn"), Select: types.SelectCount})
	if err != nil || out.Count != 120 {
		t.Fatalf("count %d (%v), want 120", out.Count, err)
	}
}
