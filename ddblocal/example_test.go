package ddblocal_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/dynafold/dynafold/ddblocal"
)

// ExampleStart runs ddblocal in memory and talks to it with the AWS SDK.
func ExampleStart() {
	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	c := dynamodb.New(dynamodb.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(srv.Endpoint()),
		Credentials:  credentials.NewStaticCredentialsProvider("any", "any", ""),
	})
	_, err = c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("orders"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	})
	if err != nil {
		panic(err)
	}
	put := &dynamodb.PutItemInput{
		TableName:           aws.String("orders"),
		Item:                map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}, "total": &types.AttributeValueMemberN{Value: "12.50"}},
		ConditionExpression: aws.String("attribute_not_exists(pk)"),
	}
	_, err = c.PutItem(ctx, put)
	fmt.Println("first put:", err)
	_, err = c.PutItem(ctx, put)
	var ccf *types.ConditionalCheckFailedException
	fmt.Println("second put fails its condition:", errors.As(err, &ccf))
	out, err := c.GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("orders"),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}, ConsistentRead: aws.Bool(true)})
	if err != nil {
		panic(err)
	}
	fmt.Println("total:", out.Item["total"].(*types.AttributeValueMemberN).Value)
	// Output:
	// first put: <nil>
	// second put fails its condition: true
	// total: 12.5
}
