package ddblocal

import (
	"errors"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// TestMessages_DynamoDBWording checks messages whose exact words callers
// may match on.
func TestMessages_DynamoDBWording(t *testing.T) {
	srv := startServer(t, Options{})
	c := client(srv, 1)
	ctx := ctxT(t)
	mkTable(t, c, "msgs", false, func(in *dynamodb.CreateTableInput) {
		in.AttributeDefinitions = append(in.AttributeDefinitions, types.AttributeDefinition{AttributeName: aws.String("g"), AttributeType: types.ScalarAttributeTypeS})
		in.GlobalSecondaryIndexes = []types.GlobalSecondaryIndex{{IndexName: aws.String("byG"),
			KeySchema:  []types.KeySchemaElement{{AttributeName: aws.String("g"), KeyType: types.KeyTypeHash}},
			Projection: &types.Projection{ProjectionType: types.ProjectionTypeKeysOnly}}}
	})
	key := map[string]types.AttributeValue{"pk": s("a")}
	cases := []struct {
		name string
		call func() error
		want string
	}{
		{"values without expressions (PutItem)", func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("msgs"), Item: key, ExpressionAttributeValues: map[string]types.AttributeValue{":v": n("1")}})
			return err
		}, "ExpressionAttributeValues can only be specified when using expressions: ConditionExpression is null"},
		{"values without expressions (Scan)", func() error {
			_, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("msgs"), ExpressionAttributeValues: map[string]types.AttributeValue{":v": n("1")}})
			return err
		}, "ExpressionAttributeValues can only be specified when using expressions: FilterExpression is null"},
		{"names without expressions", func() error {
			_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("msgs"), Key: key, ExpressionAttributeNames: map[string]string{"#a": "a"}})
			return err
		}, "ExpressionAttributeNames can only be specified when using expressions"},
		{"update sets an empty index key", func() error {
			_, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("msgs"), Key: key, UpdateExpression: aws.String("SET g = :e"),
				ExpressionAttributeValues: map[string]types.AttributeValue{":e": s("")}})
			return err
		}, "One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty string value."},
		{"transaction sets an empty index key (not a cancellation reason)", func() error {
			_, err := c.TransactWriteItems(ctx, &dynamodb.TransactWriteItemsInput{TransactItems: []types.TransactWriteItem{{Update: &types.Update{
				TableName: aws.String("msgs"), Key: key, UpdateExpression: aws.String("SET g = :e"), ExpressionAttributeValues: map[string]types.AttributeValue{":e": s("")}}}}})
			return err
		}, "One or more parameter values are not valid. The update expression attempted to update a secondary index key to a value that is not supported. The AttributeValue for a key attribute cannot contain an empty string value."},
		{"batch put with a wrong-typed key", func() error {
			_, err := c.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{RequestItems: map[string][]types.WriteRequest{"msgs": {{PutRequest: &types.PutRequest{Item: map[string]types.AttributeValue{"pk": n("1")}}}}}})
			return err
		}, "The provided key element does not match the schema"},
		{"put with a wrong-typed key", func() error {
			_, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("msgs"), Item: map[string]types.AttributeValue{"pk": n("1")}})
			return err
		}, "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"},
		{"ALL_PROJECTED_ATTRIBUTES on a table", func() error {
			_, err := c.Scan(ctx, &dynamodb.ScanInput{TableName: aws.String("msgs"), Select: types.SelectAllProjectedAttributes})
			return err
		}, "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"},
		{"short table name on DescribeTable", func() error {
			_, err := c.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String("ab")})
			return err
		}, "TableName must be at least 3 characters long and at most 255 characters long"},
	}
	for _, tc := range cases {
		var ve interface{ ErrorMessage() string }
		if err := tc.call(); !errors.As(err, &ve) || ve.ErrorMessage() != tc.want {
			t.Errorf("%s:\n got %v\nwant %q", tc.name, err, tc.want)
		}
	}
	// A plain name too short for a table is refused on the data plane too
	// (a table ARN may be longer, up to 1024 characters).
	_, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("ab"), Key: key})
	const want = "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"
	var ve interface{ ErrorMessage() string }
	if !errors.As(err, &ve) || ve.ErrorMessage() != want {
		t.Errorf("GetItem on table ab: %v, want %q", err, want)
	}
	_, err = c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("arn:aws:dynamodb:us-east-1:000000000000:table/nosuch"), Key: key})
	var rnf *types.ResourceNotFoundException
	if !errors.As(err, &rnf) {
		t.Errorf("GetItem on the ARN of a table that does not exist: %v, want ResourceNotFoundException", err)
	}
}
