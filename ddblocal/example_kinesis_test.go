package ddblocal_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/aws-sdk-go-v2/service/kinesis"
	ktypes "github.com/aws/aws-sdk-go-v2/service/kinesis/types"

	"github.com/dynafold/dynafold/ddblocal"
)

// Example_kinesisStreamingDestination streams a table to a Kinesis stream
// of the same server and reads the change record of a PutItem with the
// Kinesis client, pointed at the same endpoint.
func Example_kinesisStreamingDestination() {
	ctx := context.Background()
	srv, err := ddblocal.Start(ctx, ddblocal.Options{})
	if err != nil {
		panic(err)
	}
	defer srv.Close()
	creds := credentials.NewStaticCredentialsProvider("any", "any", "")
	db := dynamodb.New(dynamodb.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()), Credentials: creds})
	kc := kinesis.New(kinesis.Options{Region: "us-east-1", BaseEndpoint: aws.String(srv.Endpoint()), Credentials: creds})
	if _, err := db.CreateTable(ctx, &dynamodb.CreateTableInput{
		TableName:            aws.String("orders"),
		BillingMode:          types.BillingModePayPerRequest,
		AttributeDefinitions: []types.AttributeDefinition{{AttributeName: aws.String("pk"), AttributeType: types.ScalarAttributeTypeS}},
		KeySchema:            []types.KeySchemaElement{{AttributeName: aws.String("pk"), KeyType: types.KeyTypeHash}},
	}); err != nil {
		panic(err)
	}
	if _, err := kc.CreateStream(ctx, &kinesis.CreateStreamInput{StreamName: aws.String("orders-changes"), ShardCount: aws.Int32(1)}); err != nil {
		panic(err)
	}
	if _, err := db.EnableKinesisStreamingDestination(ctx, &dynamodb.EnableKinesisStreamingDestinationInput{
		TableName: aws.String("orders"), StreamArn: aws.String("arn:aws:kinesis:us-east-1:000000000000:stream/orders-changes"),
	}); err != nil {
		panic(err)
	}
	if _, err := db.PutItem(ctx, &dynamodb.PutItemInput{TableName: aws.String("orders"),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "o-1"}}}); err != nil {
		panic(err)
	}
	it, err := kc.GetShardIterator(ctx, &kinesis.GetShardIteratorInput{StreamName: aws.String("orders-changes"),
		ShardId: aws.String("shardId-000000000000"), ShardIteratorType: ktypes.ShardIteratorTypeTrimHorizon})
	if err != nil {
		panic(err)
	}
	out, err := kc.GetRecords(ctx, &kinesis.GetRecordsInput{ShardIterator: it.ShardIterator})
	if err != nil {
		panic(err)
	}
	var change struct {
		EventName, TableName, EventSource string
		Dynamodb                          struct{ Keys map[string]map[string]string }
	}
	if err := json.Unmarshal(out.Records[0].Data, &change); err != nil {
		panic(err)
	}
	fmt.Println(change.EventName, change.TableName, change.EventSource, change.Dynamodb.Keys["pk"]["S"])
	// Output:
	// INSERT orders aws:dynamodb o-1
}
