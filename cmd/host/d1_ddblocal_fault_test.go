package main

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/aws/smithy-go"

	"github.com/dynafold/dynafold/internal/dynamotest"
)

// putOnce puts one item with the SDK's retries off and returns the error
// code DynamoDB's answer carried ("" when it succeeded).
func putOnce(t *testing.T, c *dynamodb.Client, table string) string {
	t.Helper()
	_, err := c.PutItem(context.Background(), &dynamodb.PutItemInput{TableName: aws.String(table),
		Item: map[string]types.AttributeValue{"pk": &types.AttributeValueMemberS{Value: "a"}, "sk": &types.AttributeValueMemberS{Value: "b"}}},
		func(o *dynamodb.Options) { o.RetryMaxAttempts = 1 })
	if err == nil {
		return ""
	}
	var ae smithy.APIError
	if !errors.As(err, &ae) {
		t.Fatalf("PutItem: %v, not an API error", err)
	}
	return ae.ErrorCode()
}

// host ddblocal --fault OP=CODE:RATE makes requests of OP fail with CODE,
// as DynamoDB answers it, so an operator rehearses throttling and 5xx
// without writing code; a wrong OP, CODE or RATE is refused naming what is
// allowed.
func TestD1_DdblocalFaultFlagInjectsThrottlingThroughTheSDK(t *testing.T) {
	srv := startFromFlags(t, "--fault", "PutItem=ProvisionedThroughputExceededException:1", "--fault", "Query=InternalServerError:0.5")
	c := dynamotest.ClientAt(t, srv.Endpoint())
	table := dynamotest.CreateTableWith(t, c, "faults", types.StreamViewTypeNewImage)
	if code := putOnce(t, c, table); code != "ProvisionedThroughputExceededException" {
		t.Errorf("PutItem with --fault PutItem=ProvisionedThroughputExceededException:1: code %q", code)
	}

	for _, c := range []struct{ arg, want string }{
		{"PutItem", "write OP=CODE:RATE"},
		{"Putitem=ThrottlingException:1", `no operation "Putitem"`},
		{"PutItem=Throttled:1", `unknown code "Throttled"; the codes: ProvisionedThroughputExceededException, ThrottlingException, InternalServerError, ServiceUnavailable`},
		{"PutItem=ThrottlingException:1.5", "a probability is between 0 and 1"},
		{"PutItem=Unprocessed:0.5", "BatchGetItem and BatchWriteItem only"},
	} {
		if _, err := ddblocalOptions([]string{"--fault", c.arg}); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("--fault %s: err %v, want one saying %q", c.arg, err, c.want)
		}
	}
	opts, err := ddblocalOptions([]string{"--fault", "*=ServiceUnavailable:0.25", "--fault", "DynamoDBStreams.GetRecords=ThrottlingException:0.1", "--fault-seed", "7"})
	if err != nil {
		t.Fatal(err)
	}
	if opts.Faults.Rates["*"]["ServiceUnavailable"] != 0.25 || opts.Faults.Rates["DynamoDBStreams.GetRecords"]["ThrottlingException"] != 0.1 || opts.Faults.Seed != 7 {
		t.Errorf("faults %+v", opts.Faults)
	}
}
