package ddblocal_test

import (
	"context"
	"errors"
	"fmt"
	"os"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	stypes "github.com/aws/aws-sdk-go-v2/service/dynamodbstreams/types"

	"github.com/dynafold/dynafold/ddblocal"
)

// ExampleStart runs ddblocal in memory and talks to it with the AWS SDK
// (aws-sdk-go-v2), only the endpoint changed.
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

// ExampleStart_persistent keeps tables, items and streams in a data
// directory (the --data flag of `host ddblocal`): a server started again on
// it serves them, and every acknowledged write has its stream record, even
// after a crash.
func ExampleStart_persistent() {
	ctx := context.Background()
	dir, err := os.MkdirTemp("", "ddblocal-example")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	sdk := func(srv *ddblocal.Server) *dynamodb.Client {
		return dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()),
			Credentials: credentials.NewStaticCredentialsProvider("any", "any", "")})
	}

	srv, err := ddblocal.Start(ctx, ddblocal.Options{DataDir: dir})
	if err != nil {
		panic(err)
	}
	c := sdk(srv)
	if _, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("orders"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		panic(err)
	}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}}); err != nil {
		panic(err)
	}
	if err := srv.Close(); err != nil {
		panic(err)
	}

	// A second server on the same directory; a second one at the same time
	// would fail with ErrDataFileLocked.
	srv, err = ddblocal.Start(ctx, ddblocal.Options{DataDir: dir})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	out, err := sdk(srv).GetItem(ctx, &dynamodb.GetItemInput{TableName: aws.String("orders"),
		Key: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}})
	if err != nil {
		panic(err)
	}
	fmt.Println("after restart:", out.Item["pk"].(*types.AttributeValueMemberS).Value)
	// Output:
	// after restart: o-1
}

// Example_readStream enables a table's stream and reads its records with
// the DynamoDB Streams client.
func Example_readStream() {
	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	creds := credentials.NewStaticCredentialsProvider("any", "any", "")
	c := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()), Credentials: creds})
	sc := dynamodbstreams.New(dynamodbstreams.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()), Credentials: creds})
	table, err := c.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("orders"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
		StreamSpecification:  &types.StreamSpecification{StreamEnabled: aws.Bool(true), StreamViewType: types.StreamViewTypeNewAndOldImages},
	})
	if err != nil {
		panic(err)
	}
	key := map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}
	if _, err := c.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"),
		Item: map[string]types.AttributeValue{"pk": key["pk"], "state": &types.AttributeValueMemberS{Value: "new"}}}); err != nil {
		panic(err)
	}
	if _, err := c.UpdateItem(ctx, &dynamodb.UpdateItemInput{TableName: aws.String("orders"), Key: key,
		UpdateExpression: aws.String("SET #s = :s"), ExpressionAttributeNames: map[string]string{"#s": "state"},
		ExpressionAttributeValues: map[string]types.AttributeValue{":s": &types.AttributeValueMemberS{Value: "paid"}}}); err != nil {
		panic(err)
	}
	if _, err := c.DeleteItem(ctx, &dynamodb.DeleteItemInput{TableName: aws.String("orders"), Key: key}); err != nil {
		panic(err)
	}

	arn := table.TableDescription.LatestStreamArn
	ds, err := sc.DescribeStream(ctx, &dynamodbstreams.DescribeStreamInput{StreamArn: arn})
	if err != nil {
		panic(err)
	}
	for _, sh := range ds.StreamDescription.Shards {
		it, err := sc.GetShardIterator(ctx, &dynamodbstreams.GetShardIteratorInput{StreamArn: arn, ShardId: sh.ShardId,
			ShardIteratorType: stypes.ShardIteratorTypeTrimHorizon})
		if err != nil {
			panic(err)
		}
		recs, err := sc.GetRecords(ctx, &dynamodbstreams.GetRecordsInput{ShardIterator: it.ShardIterator})
		if err != nil {
			panic(err)
		}
		for _, r := range recs.Records {
			state := func(img map[string]stypes.AttributeValue) string {
				if v, ok := img["state"].(*stypes.AttributeValueMemberS); ok {
					return v.Value
				}
				return "-"
			}
			fmt.Println(r.EventName, state(r.Dynamodb.OldImage), "->", state(r.Dynamodb.NewImage))
		}
	}
	// Output:
	// INSERT - -> new
	// MODIFY new -> paid
	// REMOVE paid -> -
}
